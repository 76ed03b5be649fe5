"""SessionContinuity (seed 003's "session-continuity" neighbourhood): the conversation around the top hits.

The turn that answers a question is often a turn or two after the one that names its topic, and does not repeat
the topic's words ("How did you feel watching the meteor shower?" is answered by "It was one of those moments
where I felt tiny and in awe of the universe", two turns after "we saw the Perseid meteor shower"). So the chunks
within ``window`` turns of the ``hits`` best candidates, in the same session, become candidates too: their base
score is their hit's, times ``decay`` per turn of distance, and they go through the same 11 stages (their own
cosine, recency, trust...) before they are merged with the rest, each memory at its best score.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from app.db.queries import Q
from app.read.config import ContinuityConfig
from app.read.context import ReadStage, RecallContext
from app.read.search import Candidate, score_blocks

if TYPE_CHECKING:
    from app.read.config import ReadConfig
    from app.services import Services


class SessionContinuity(ReadStage):
    name: ClassVar[str] = "continuity"
    needs_db: ClassVar[bool] = True

    def __init__(self, config: ContinuityConfig | None = None) -> None:
        self.config = config or ContinuityConfig()

    @classmethod
    def build(cls, services: Services, config: ReadConfig) -> SessionContinuity:
        return cls(config.continuity)

    async def __call__(self, ctx: RecallContext, cands: list[Candidate]) -> list[Candidate]:
        cfg = self.config
        top = cands[: cfg.hits]
        if not cfg.enabled or not any(c.source_turn_ids for c in top):
            return cands  # memories written directly (not turns) have no conversation around them
        cur = await ctx.conn.execute(Q.session_neighbours,
                                     ([c.id for c in top], cfg.window))
        rows = await cur.fetchall()
        base_of = {c.id: c.base for c in top}
        ids = [int(r["id"]) for r in rows]
        base = [base_of[int(r["parent_id"])] * cfg.decay ** int(r["distance"]) for r in rows]
        found = await score_blocks(ctx, ids, base, limit=len(ids), origin="context")
        ctx.emit(neighbours=len(ids), scored=len(found))
        return merge_best(cands, found, ctx.limit)


def merge_best(cands: list[Candidate], more: list[Candidate], limit: int) -> list[Candidate]:
    """Each memory once, at its best score, best first."""
    best: dict[int, Candidate] = {c.id: c for c in cands}
    for c in more:
        if c.id not in best or c.score > best[c.id].score:
            best[c.id] = c
    return sorted(best.values(), key=lambda c: (-c.score, c.id))[:limit]
