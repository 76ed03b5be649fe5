"""Multi-signal edges and Leiden communities (seed 004): the graph signals the dream gathers.

``MultiSignalEdges`` recomputes the vault's ``edge_weight`` rows in SQL (``compute_edge_weights_v1``: co-occurrence,
session Jaccard, Adamic-Adar, type affinity from the canonical predicates' domain and range, name cosine; weights
and threshold are ``EdgeConfig``). ``Communities`` runs Leiden (``leidenalg`` on ``igraph``, RBConfiguration with the
composite weights) at each resolution of ``CommunityConfig`` and stores the partitions (L1); ``summarize`` writes
an L2 summary of each community of the default resolution with the ``summarize`` task (extractive offline), embedded
for GLOBAL cascade recall.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.background.config import CommunityConfig, EdgeConfig
from app.db.queries import Q
from app.models.tasks import SUMMARIZE, SummarizeInput

if TYPE_CHECKING:
    import psycopg

    from app.services import Services


class MultiSignalEdges:
    def __init__(self, config: EdgeConfig | None = None) -> None:
        self.config = config or EdgeConfig()

    async def __call__(self, conn: psycopg.AsyncConnection) -> dict[str, int]:
        c = self.config
        cur = await conn.execute(Q.compute_edge_weights,
                                 (c.w_co_occurrence, c.w_session_jaccard, c.w_adamic_adar, c.w_type_affinity,
                                  c.w_semantic, c.threshold, c.default_affinity, c.max_hub_degree))
        row = await cur.fetchone()
        return {"pairs": row["pairs"], "kept": row["kept"]}


@dataclass(frozen=True, slots=True)
class Partition:
    resolution: float
    communities: list[list[int]]


def leiden(edges: list[tuple[int, int, float]], resolutions: tuple[float, ...], *, seed: int,
           min_size: int) -> list[Partition]:
    """Leiden over a weighted undirected graph, once per resolution; communities smaller than ``min_size`` dropped,
    largest first. Deterministic for a given seed."""
    import igraph as ig
    import leidenalg

    if not edges:
        return [Partition(r, []) for r in resolutions]
    nodes = sorted({n for a, b, _ in edges for n in (a, b)})
    index = {n: i for i, n in enumerate(nodes)}
    graph = ig.Graph(n=len(nodes), edges=[(index[a], index[b]) for a, b, _ in edges], directed=False)
    graph.es["weight"] = [float(w) for _, _, w in edges]
    out = []
    for r in resolutions:
        part = leidenalg.find_partition(graph, leidenalg.RBConfigurationVertexPartition, weights="weight",
                                        resolution_parameter=r, seed=seed)
        groups = sorted(([nodes[i] for i in c] for c in part if len(c) >= min_size), key=lambda g: (-len(g), g[0]))
        out.append(Partition(r, groups))
    return out


class Communities:
    def __init__(self, services: Services, config: CommunityConfig | None = None) -> None:
        self.services = services
        self.config = config or CommunityConfig()

    async def detect(self, conn: psycopg.AsyncConnection, run_id: int) -> dict[str, Any]:
        """L1: Leiden at each resolution over the kept edges; replaces the vault's communities."""
        cfg = self.config
        cur = await conn.execute(Q.community_edges)
        edges = [(int(r["a_id"]), int(r["b_id"]), float(r["weight"])) for r in await cur.fetchall()]
        parts = await asyncio.to_thread(leiden, edges, cfg.resolutions, seed=cfg.seed, min_size=cfg.min_size)
        payload = [{"resolution": p.resolution, "members": members} for p in parts for members in p.communities]
        await conn.execute(Q.replace_communities,
                           (run_id, json.dumps(payload)))
        return {str(p.resolution): [len(m) for m in p.communities] for p in parts}

    async def summarize(self, conn: psycopg.AsyncConnection) -> dict[str, int]:
        """L2: a summary of each community of the default resolution with at least ``summary_min_size`` members."""
        cfg = self.config
        cur = await conn.execute(Q.communities_at,
                                 (cfg.default_resolution, cfg.max_summaries))
        rows = [r for r in await cur.fetchall() if r["size"] >= cfg.summary_min_size]
        written = 0
        for r in rows:
            cur = await conn.execute(Q.community_texts,
                                     (r["id"], cfg.summary_max_texts))
            texts = [t["content"] for t in await cur.fetchall()]
            if not texts:
                continue
            out = await self.services.llm.run(SUMMARIZE, SummarizeInput(mode="community", texts=texts,
                                                                        title=r["label"] or None))
            vec = (await self.services.models.embed_documents(self.services.embedder, [out.summary]))[0]
            await conn.execute(Q.set_community_summary,
                               (r["id"], out.summary, out.key_points, vec))
            written += 1
        return {"summaries": written}
