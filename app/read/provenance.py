"""ProvenanceExpansion: a summary the rails find leads to the memories it was made from.

What the write track's session close and the dream build on top of memories (seed 003's session compression,
seed 004's L2 community summaries) restates many memories in few words: a session summary names every topic of
its session, a community summary the facts around a few entities. Such a text is close to a question that one of
its sources answers, and the rails find it; but the answer is in the source, a turn said on a date by a speaker,
and a summary in the top 10 shows the agent a paraphrase and takes the source's place. So, by the provenance the
tables keep (``memvault.provenance_sources_v1``):

- a session summary among the ``hits`` best candidates brings in the ``per_source`` chunks of its session nearest
  the question; each has the summary's base score times ``decay``, then goes through the same 11 stages as every
  candidate (its own cosine, recency, trust...); the summary itself then ranks at ``summary_w`` x its score
  (1: where it was; below 1: after the sources it stands for);
- once the vault has dreamed, the ``communities`` community summaries nearest the question (cosine at least
  ``min_cosine``) bring in the ``per_source`` evidence blocks of their members' triples nearest the question,
  each at ``community_w`` x the best candidate's base x the summary's cosine, scored the same way.

Each memory is ranked once, at its best score. The weights are chosen on folds (``bench dream --tune``,
``bench locomo --tune``; docs/read-track-log.md round 12).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from app.db.queries import Q
from app.read.config import ProvenanceConfig
from app.read.context import ReadStage, RecallContext
from app.read.continuity import merge_best
from app.read.search import Candidate, score_blocks

if TYPE_CHECKING:
    from app.read.config import ReadConfig
    from app.services import Services


class ProvenanceExpansion(ReadStage):
    name: ClassVar[str] = "provenance"
    needs_db: ClassVar[bool] = True

    def __init__(self, config: ProvenanceConfig | None = None, *, community_resolution: float = 1.0) -> None:
        self.config = config or ProvenanceConfig()
        self.community_resolution = community_resolution

    @classmethod
    def build(cls, services: Services, config: ReadConfig) -> ProvenanceExpansion:
        return cls(config.provenance, community_resolution=config.community_resolution)

    def active(self, ctx: RecallContext) -> bool:
        cfg = self.config
        return cfg.enabled and cfg.per_source > 0 and ctx.qvec is not None

    async def __call__(self, ctx: RecallContext, cands: list[Candidate]) -> list[Candidate]:
        cfg = self.config
        top = cands[: cfg.hits]
        summaries = {c.id: c for c in top if c.kind == "summary"}
        communities = cfg.communities if cfg.community_w > 0 else 0
        if not summaries and not communities:
            return cands
        cur = await ctx.conn.execute(Q.provenance_sources, (
            list(summaries), ctx.qvec, ctx.as_of, cfg.per_source, communities, cfg.min_cosine,
            self.community_resolution))
        rows = await cur.fetchall()
        if not rows:
            ctx.emit(summaries=len(summaries), found=0)
            return cands
        best_base = max((c.base for c in cands), default=0.0)
        base: dict[int, float] = {}
        via: dict[str, int] = {}
        for r in rows:
            if r["parent_id"] is not None:
                b = summaries[int(r["parent_id"])].base * cfg.decay * float(r["weight"])
            else:
                b = best_base * cfg.community_w * float(r["weight"])
            bid = int(r["id"])
            base[bid] = max(base.get(bid, 0.0), b)
            via[r["via"]] = via.get(r["via"], 0) + 1
        found = await score_blocks(ctx, list(base), list(base.values()), limit=len(base), origin="provenance")
        if cfg.summary_w != 1.0 and summaries:
            cands = sorted((c.with_score(c.score * cfg.summary_w) if c.id in summaries else c for c in cands),
                           key=lambda c: (-c.score, c.id))
        before = {c.id for c in cands}
        out = merge_best(cands, found, ctx.limit)
        ctx.emit(summaries=len(summaries), **{f"via_{k}": n for k, n in sorted(via.items())},
                 scored=len(found), entered=sum(1 for c in out if c.id not in before))
        return out

