"""``fitgate``: the LLM keep/drop relevance judgment of seed 003 as a reranker.

Scores are 1.0 (keep) and 0.0 (drop), in input order; :meth:`FitGateReranker.judge` gives the verdicts with
their reasons. It fails open, as the seed requires: if the LLM errors, is short-circuited by its breaker, or
answers with something invalid, every candidate is kept (rather than blanking the context). With the heuristic
LLM it runs the heuristic gate (content-term overlap, keep when unsure).
"""

from __future__ import annotations

from collections.abc import Sequence

from app.models.base import LLM, Reranker
from app.models.tasks.fit_gate import FIT_GATE, FitGateInput, FitGateOutput, FitVerdict


class FitGateReranker(Reranker):
    def __init__(self, llm: LLM, *, intent: str | None = None) -> None:
        self.llm = llm
        self.intent = intent
        self.name = f"fitgate:{llm.name}"
        self.fail_open = 0

    async def judge(self, query: str, texts: Sequence[str], *, intent: str | None = None) -> FitGateOutput:
        payload = FitGateInput(query=query, intent=intent or self.intent, candidates=list(texts))
        result = await self.llm.run_traced(FIT_GATE, payload)
        if result.fallback_reason is not None:
            self.fail_open += 1
            reason = f"gate failed open ({result.fallback_reason})"
            return FitGateOutput(
                verdicts=[FitVerdict(index=i, keep=True, reason=reason) for i in range(len(texts))]
            )
        return result.output

    async def score(self, query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        verdicts = await self.judge(query, texts)
        return [1.0 if v.keep else 0.0 for v in verdicts.verdicts]
