"""CragEvaluator (seed 000, slow mode): is what was retrieved good enough to answer the query?

The ``crag_evaluate`` task returns CORRECT / AMBIGUOUS / INCORRECT; the verdict is logged with the recall
(``recall_log.crag_verdict``). Two or more INCORRECT verdicts for the same query (by query key) open a knowledge
gap (``memvault.record_recall_v1``), surfaced in ``meta.knowledge_gap`` at the next such recall.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from app.read.context import ReadStage, RecallContext
from app.read.search import Candidate

if TYPE_CHECKING:
    from app.read.config import ReadConfig
    from app.services import Services


class CragEvaluator(ReadStage):
    """Judges the top 5 candidates (``ctx.found["crag"]``); the candidates pass unchanged."""

    name: ClassVar[str] = "crag"
    calls_models: ClassVar[bool] = True

    def __init__(self, services: Services) -> None:
        self.services = services

    @classmethod
    def build(cls, services: Services, config: ReadConfig) -> CragEvaluator:
        return cls(services)

    async def __call__(self, ctx: RecallContext, cands: list[Candidate]) -> list[Candidate]:
        query, top = ctx.query, cands[:5]
        from app.models.tasks.crag_evaluate import CRAG_EVALUATE, CragInput

        payload = CragInput(query=query, texts=[c.text for c in top],
                            scores=[max(0.0, min(1.0, c.cosine)) for c in top] or None)
        traced = await self.services.llm.run_traced(CRAG_EVALUATE, payload)
        out = traced.output
        ctx.count(f"crag.{out.verdict.lower()}")
        ctx.emit(verdict=out.verdict, score=out.score, source=traced.source)
        ctx.found["crag"] = {"verdict": out.verdict, "score": out.score, "reason": out.reason,
                             "source": traced.source}
        return cands
