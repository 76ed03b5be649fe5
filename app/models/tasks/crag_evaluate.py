"""``crag_evaluate.v1``: is what was retrieved good enough to answer the query? (seed 000, CRAG, slow mode)

``INCORRECT`` verdicts accumulate into knowledge gaps (seed 004), so the heuristic is conservative about them: it
says INCORRECT only when the retrieved texts cover almost none of the query's terms in the same language.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from app.models.tasks.base import Task, register
from app.models.tasks.text import content_terms, overlap

Verdict = Literal["CORRECT", "AMBIGUOUS", "INCORRECT"]


class CragInput(BaseModel):
    query: str = Field(min_length=1)
    texts: list[str]
    scores: list[float] | None = Field(default=None, description="Retrieval scores in [0, 1], if any.")


class CragOutput(BaseModel):
    verdict: Verdict
    score: float = Field(ge=0.0, le=1.0)
    reason: str = ""


CORRECT_AT = 0.6
INCORRECT_BELOW = 0.25


def crag_evaluate_heuristic(payload: CragInput) -> CragOutput:
    """score = 0.6 x (best single text's coverage of the query terms) + 0.4 x (coverage by all texts together),
    blended 50/50 with the best retrieval score when given. CORRECT >= 0.6, INCORRECT < 0.25, else AMBIGUOUS.
    A query and texts in different scripts cannot be judged by terms: AMBIGUOUS at 0.5."""
    if not payload.texts:
        return CragOutput(verdict="INCORRECT", score=0.0, reason="nothing was retrieved")
    q = set(content_terms(payload.query))
    if not q:
        return CragOutput(verdict="AMBIGUOUS", score=0.5, reason="query has no content terms")
    docs = [set(content_terms(t)) for t in payload.texts]
    union = set().union(*docs)
    best = max(overlap(q, d) for d in docs)
    cover = overlap(q, union)
    score = 0.6 * best + 0.4 * cover
    if payload.scores:
        score = 0.5 * score + 0.5 * max(0.0, min(1.0, max(payload.scores)))
    q_zh = any(len(t) == 2 and not t.isascii() for t in q)
    d_zh = any(len(t) <= 2 and not t.isascii() for t in union)
    if cover == 0.0 and q_zh != d_zh:
        return CragOutput(verdict="AMBIGUOUS", score=0.5, reason="query and memories in different languages")
    score = round(score, 3)
    missing = sorted(q - union)[:5]
    if score >= CORRECT_AT:
        verdict: Verdict = "CORRECT"
    elif score < INCORRECT_BELOW:
        verdict = "INCORRECT"
    else:
        verdict = "AMBIGUOUS"
    reason = f"covers {cover:.0%} of the query terms" + (f"; missing {', '.join(missing)}" if missing else "")
    return CragOutput(verdict=verdict, score=score, reason=reason)


SYSTEM = """You evaluate retrieval for a memory service (Corrective RAG). Given a query and the retrieved memories,
answer CORRECT if they contain what is needed to answer it, AMBIGUOUS if they are related but incomplete, INCORRECT
if they are off-topic or missing. Give a score between 0 (useless) and 1 (fully answers) and a short reason."""


def _render(p: CragInput) -> str:
    return "\n".join([f"Query: {p.query}", "Retrieved:"] + [f"[{i}] {t}" for i, t in enumerate(p.texts)])


CRAG_EVALUATE: Task[CragInput, CragOutput] = register(
    Task(
        name="crag_evaluate",
        version=1,
        input_model=CragInput,
        output_model=CragOutput,
        system=SYSTEM,
        render=_render,
        heuristic=crag_evaluate_heuristic,
        max_tokens=300,
    )
)
