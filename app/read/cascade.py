"""CascadeRecall (seed 000, section V): slow intents only; the fast path has already run and stays in ``cards``.

- LOCAL: seed entities (named in the query, linked to the top hits, nearest to the query vector), a k-hop
  expansion by Cypher in the vault's AGE graph (``memvault.graph_expand_v1``), Personalized PageRank over that
  neighbourhood (damping 0.85, HippoRAG), and the neighbouring triples' evidence blocks scored by the same 11
  stages as the fast path, with their PPR mass as base score.
- GLOBAL: the L1 communities (Leiden, computed by the dream loop: app/background/communities.py) of the same seed
  entities: the memories their members are evidence of (``memvault.community_evidence_v1``), scored by the same
  stages, with the count of their in-community triples as base score; and the L2 community summaries nearest to
  the query (``memvault.community_summaries_v1``; pre-compressed views, not scored).
- HYBRID: both. An empty graph, or a vault that never dreamed, gives nothing and costs a query or two.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, ClassVar

from app.db.queries import Q
from app.pagerank import pagerank
from app.read.config import ReadConfig
from app.read.context import ReadStage, RecallContext
from app.read.search import Candidate, score_blocks

if TYPE_CHECKING:
    from app.services import Services


class CascadeRecall(ReadStage):
    """Adds ``ctx.found["cascade"]`` (the response's cascade cards); the ranked candidates pass unchanged."""

    name: ClassVar[str] = "cascade"
    needs_db: ClassVar[bool] = True

    def __init__(self, services: Services, config: ReadConfig | None = None) -> None:
        self.services = services
        self.config = config or ReadConfig()

    @classmethod
    def build(cls, services: Services, config: ReadConfig) -> CascadeRecall:
        return cls(services, config)

    async def __call__(self, ctx: RecallContext, cands: list[Candidate]) -> list[Candidate]:
        out: list[Candidate] = ctx.found.setdefault("cascade", [])
        if not (ctx.plan.triples or ctx.plan.communities):
            return cands
        top_ids = [c.id for c in cands[:10]]
        cur = await ctx.conn.execute(Q.cascade_seed_entities, (ctx.query, top_ids, ctx.qvec))
        seeds = {r["entity_id"]: float(r["weight"]) for r in await cur.fetchall()}
        if ctx.plan.triples:
            out += await self._local(ctx, seeds)
        if ctx.plan.communities:
            out += await self._global(ctx, seeds)
        return cands

    async def _local(self, ctx: RecallContext, seeds: dict[int, float]) -> list[Candidate]:
        cfg, conn = self.config, ctx.conn
        if not seeds:
            ctx.emit(mode="LOCAL", event="no_seed_entities")
            return []
        cur = await conn.execute(Q.graph_expand,
                                 (list(seeds), cfg.cascade_hops, ctx.as_of))
        edges = await cur.fetchall()
        if not edges:
            ctx.emit(mode="LOCAL", event="empty_neighbourhood",
                           seeds=len(seeds))
            return []
        ppr = pagerank([(e["subject_id"], e["object_id"], float(e["confidence"] or 1.0)) for e in edges],
                                    seeds, damping=cfg.ppr_damping)
        mass: dict[int, float] = defaultdict(float)
        for e in edges:
            if e["evidence_block_id"] is not None:
                mass[e["evidence_block_id"]] += (ppr.get(e["subject_id"], 0) + ppr.get(e["object_id"], 0)) / 2 * \
                    float(e["confidence"] or 1.0)
        if not mass:
            return []
        top = max(mass.values())
        ids = list(mass)
        base = [mass[b] / top for b in ids]
        found = await score_blocks(ctx, ids, base, limit=cfg.cascade_k * 2, origin="cascade")
        ctx.emit(mode="LOCAL", seeds=len(seeds), edges=len(edges),
                       evidence=len(ids), kept=len(found))
        return found

    async def _global(self, ctx: RecallContext, seeds: dict[int, float]) -> list[Candidate]:
        cfg = self.config
        members: list[Candidate] = []
        if seeds:
            cur = await ctx.conn.execute(Q.community_evidence,
                                         (list(seeds), cfg.community_resolution, cfg.community_evidence))
            rows = await cur.fetchall()
            if rows:
                top = max(float(r["weight"]) for r in rows)
                members = await score_blocks(ctx, [r["block_id"] for r in rows],
                                             [float(r["weight"]) / top for r in rows],
                                             limit=cfg.cascade_k * 2, origin="community")
        cur = await ctx.conn.execute(Q.community_summaries, (ctx.qvec, 5))
        rows = await cur.fetchall()
        ctx.emit(mode="GLOBAL", seeds=len(seeds), members=len(members), summaries=len(rows))
        # Community summaries are not blocks: negative ids keep them apart from block ids in the response.
        return members + [Candidate(id=-int(r["id"]), score=float(r["cosine"]), base=float(r["cosine"]),
                          cosine=float(r["cosine"]), text=r["summary"], content=r["summary"], kind="summary",
                          origin=f"community_L{r['level']}") for r in rows]
