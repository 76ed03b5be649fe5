"""KnowledgeGap (slow mode): a gap opened earlier for this question (two INCORRECT CRAG verdicts, see
:mod:`app.read.crag`) is looked up and reported in ``meta.knowledge_gap``; the candidates pass unchanged."""

from __future__ import annotations

from typing import ClassVar

from app.db.queries import Q
from app.read.context import ReadStage, RecallContext
from app.read.search import Candidate


class KnowledgeGap(ReadStage):
    name: ClassVar[str] = "gap"
    needs_db: ClassVar[bool] = True

    async def __call__(self, ctx: RecallContext, cands: list[Candidate]) -> list[Candidate]:
        cur = await ctx.conn.execute(Q.knowledge_gap_for, (ctx.query,))
        gap = await cur.fetchone()
        if gap is not None:
            ctx.found["knowledge_gap"] = {"id": gap["id"], "query": gap["query"],
                                          "incorrect_count": gap["incorrect_count"],
                                          "first_seen_at": gap["first_seen_at"].isoformat()}
        return cands
