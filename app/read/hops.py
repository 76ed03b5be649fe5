"""HopExpansion: the second hop of a question whose answer is spread over several places.

"What activities has Melanie done with her family?" is answered by a camping trip in one session, painting in
another, a museum in a third. The first hop (both rails, fused) finds the turns that share the question's words
or meaning; the other occasions often share neither ("we went camping", "the kids loved the dinosaur exhibit")
and sit outside the rails' top 100. They are near what the first hop found instead: in meaning (a turn about a
pottery class is near one about painting), and in what they name (the same place, pet or person, named again
months later). So for such a question (``asks_many``, the grammar SessionSpread reads), the ``seeds`` best
candidates of the first hop bring in:

- their ``dense_n`` nearest memories by embedding each (``memvault.hop_dense_v1``);
- up to ``entity_n`` memories that are evidence of a triple naming an entity the seeds' triples name, rarer
  entities counting more and the ubiquitous ones (the people a conversation is between) left out, plus, once the
  dream loop has found communities, the other members of those entities' communities (GLOBAL recall over the L1
  communities, ``memvault.hop_entities_v1``).

Each newcomer's base score is its seed's times ``decay`` times its similarity (dense) or its share of the best
entity weight; it then goes through the same 11 stages as every candidate (its own cosine to the question,
recency, trust...) and is ranked with the first hop's candidates, each memory at its best score. A question
that asks for one thing is left as it is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from app.db.queries import Q
from app.read.config import HopConfig
from app.read.context import ReadStage, RecallContext
from app.read.continuity import merge_best
from app.read.search import Candidate, score_blocks
from app.read.spread import asks_many

if TYPE_CHECKING:
    from app.read.config import ReadConfig
    from app.services import Services


class HopExpansion(ReadStage):
    name: ClassVar[str] = "hops"
    needs_db: ClassVar[bool] = True

    def __init__(self, config: HopConfig | None = None, *, community_resolution: float = 1.0) -> None:
        self.config = config or HopConfig()
        self.community_resolution = community_resolution

    @classmethod
    def build(cls, services: Services, config: ReadConfig) -> HopExpansion:
        return cls(config.hops, community_resolution=config.community_resolution)

    def active(self, ctx: RecallContext) -> bool:
        cfg = self.config
        return cfg.enabled and cfg.seeds > 0 and (cfg.dense_n > 0 or cfg.entity_n > 0) \
            and (cfg.always or asks_many(ctx.query))

    async def __call__(self, ctx: RecallContext, cands: list[Candidate]) -> list[Candidate]:
        cfg = self.config
        top = cands[: cfg.seeds]
        if not top:
            return cands
        ids = [c.id for c in top]
        base_of = {c.id: c.base for c in top}
        base: dict[int, float] = {}
        via: dict[str, int] = {}

        def add(rows: list[dict], kind: str | None = None) -> None:
            for r in rows:
                b = base_of[int(r["parent_id"])] * cfg.decay * float(r["weight"] or 0.0)
                bid = int(r["id"])
                if b > base.get(bid, 0.0):
                    base[bid] = b
                key = kind or r["via"]
                via[key] = via.get(key, 0) + 1

        if cfg.dense_n > 0:
            cur = await ctx.conn.execute(Q.hop_dense, (ids, cfg.dense_n, ctx.as_of))
            add(await cur.fetchall(), "dense")
        if cfg.entity_n > 0:
            cur = await ctx.conn.execute(Q.hop_entities, (ids, cfg.entity_n, cfg.max_share, ctx.as_of,
                                                          cfg.communities, self.community_resolution))
            add(await cur.fetchall())
        if not base:
            ctx.emit(seeds=len(ids), found=0)
            return cands
        found = await score_blocks(ctx, list(base), list(base.values()), limit=len(base), origin="hop")
        out = merge_best(cands, found, ctx.limit)
        before = {c.id for c in cands}
        ctx.count("hops.applied")
        ctx.emit(seeds=len(ids), found=len(base), **{f"via_{k}": n for k, n in sorted(via.items())},
                 scored=len(found), entered=sum(1 for c in out if c.id not in before))
        return out
