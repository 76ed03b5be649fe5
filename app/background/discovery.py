"""Surprise discovery (seed 004): non-obvious links in the graph, dropped into the discovery inbox, never pushed.

- ``cross_community``: a strong edge (weight at least the median of the vault's kept edges) between two Leiden
  communities.
- ``indirect_strong``: two entities no triple links, two steps apart, whose Personalized PageRank over the triples
  (the walk restarts at the source; ``app.pagerank``) is at least half that of the source's weakest direct
  neighbour: as close as a stated relation, though none was stated. Sources: the vault's most connected entities.
- ``knowledge_gap``: in a community, a predicate most members of one type state that one of them lacks (an
  expected neighbour is missing).
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.db.queries import Q
from app.pagerank import pagerank

if TYPE_CHECKING:
    import psycopg


@dataclass(frozen=True, slots=True)
class DiscoveryConfig:
    resolution: float = 1.0
    cross_quantile: float = 0.5
    sources: int = 10  # PPR walks from the 10 most connected entities
    neighbour_ratio: float = 0.5  # a two-hop target's mass against the source's weakest direct neighbour's
    per_source: int = 2
    limit: int = 10


class SurpriseDiscovery:
    def __init__(self, config: DiscoveryConfig | None = None) -> None:
        self.config = config or DiscoveryConfig()

    async def __call__(self, conn: psycopg.AsyncConnection, run_id: int) -> dict[str, int]:
        c = self.config
        items: list[dict[str, Any]] = []
        cur = await conn.execute(Q.cross_community_edges,
                                 (c.resolution, c.cross_quantile, c.limit))
        for r in await cur.fetchall():
            items.append({"kind": "cross_community", "key": f"{r['a']}|{r['b']}", "score": r["weight"],
                          "title": f"{r['a']} links {r['a_community']} with {r['b_community']} (through {r['b']})",
                          "detail": dict(r)})
        items += await self._indirect(conn)
        cur = await conn.execute(Q.expected_neighbour_gaps, (c.resolution,))
        for r in (await cur.fetchall())[:c.limit]:
            items.append({"kind": "knowledge_gap", "key": f"{r['entity']}|{r['predicate']}", "score": r["share"],
                          "title": f"{r['entity']} {r['predicate']} ? (most of {r['community']} have one)",
                          "detail": {**dict(r), "source": "expected_neighbour"}})
        cur = await conn.execute(Q.discovery_add,
                                 (run_id, json.dumps(items, default=str)))
        added = (await cur.fetchone())["n"]
        by_kind: dict[str, int] = defaultdict(int)
        for i in items:
            by_kind[i["kind"]] += 1
        return {"found": dict(by_kind), "added": added}

    async def _indirect(self, conn: psycopg.AsyncConnection) -> list[dict[str, Any]]:
        c = self.config
        cur = await conn.execute(Q.centrality_edges)
        edges = [(int(r["subject_id"]), int(r["object_id"]), float(r["weight"])) for r in await cur.fetchall()]
        if not edges:
            return []
        adj: dict[int, set[int]] = defaultdict(set)
        for a, b, _ in edges:
            adj[a].add(b)
            adj[b].add(a)
        sources = sorted(adj, key=lambda n: (-len(adj[n]), n))[:c.sources]
        found: list[tuple[int, int, float]] = []
        for s in sources:
            ppr = pagerank(edges, {s: 1.0})
            two_hop = {n for m in adj[s] for n in adj[m]} - adj[s] - {s}
            bar = c.neighbour_ratio * min(ppr.get(m, 0.0) for m in adj[s])
            best = sorted(((ppr.get(n, 0.0), n) for n in two_hop), reverse=True)[:c.per_source]
            found += [(s, n, score) for score, n in best if score >= bar and score > 0]
        if not found:
            return []
        cur = await conn.execute(Q.entity_names,
                                 (sorted({x for s, n, _ in found for x in (s, n)}),))
        names = {r["entity_id"]: r["name"] for r in await cur.fetchall()}
        return [{"kind": "indirect_strong", "key": f"{names[s]}|{names[n]}", "score": round(score, 4),
                 "title": f"{names[s]} and {names[n]} are not linked, but two steps of the graph join them strongly",
                 "detail": {"source": names[s], "target": names[n], "ppr": round(score, 4)}}
                for s, n, score in found[:c.limit]]
