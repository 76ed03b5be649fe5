"""What the retrieval benchmarks share: ingest sessions through the write track, recall through a pipeline,
map the returned memories back to their provenance.

Pipelines: ``full`` is the read track's ``recall`` (intent, fast search, scoring, rerank gate, formatter);
``dense``, ``sparse`` and ``rrf`` are the baselines of :mod:`app.bench.baselines`.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from app.importers.datasets import Session
from app.bench.metrics import Memory
from app.bench.runtime import bench_settings
from app.services import Services
from app.vaults import Vault

PIPELINES = ("dense", "sparse", "rrf", "full")

# Provenance of returned blocks: the block's own session and turns, then every other place it was said
# (a SKIP records the new occurrence in block_source).
_PROVENANCE_SQL = """
SELECT b.id, b.content, b.session_id, b.source_turn_ids,
       coalesce((SELECT array_agg(DISTINCT s.turn_id) FROM memvault.block_source s
                 WHERE s.vault_id = b.vault_id AND s.block_id = b.id AND s.turn_id IS NOT NULL), '{}')
           AS seen_turns,
       coalesce((SELECT array_agg(s.session_id ORDER BY s.said_at, s.recorded_at) FROM memvault.block_source s
                 WHERE s.vault_id = b.vault_id AND s.block_id = b.id AND s.session_id IS NOT NULL), '{}')
           AS seen_sessions
FROM memvault.block b
WHERE b.vault_id = %s AND b.id = ANY(%s)
"""


class Retriever(Protocol):
    async def __call__(self, vault: Vault, query: str, *, as_of: datetime | None, n: int) -> list[int]: ...


@dataclass(frozen=True, slots=True)
class Hit:
    """A returned block id and the text the pipeline returned for it (None: the block's content)."""

    block_id: int
    text: str | None = None


def make_retriever(services: Services, pipeline: str) -> Retriever:
    if pipeline == "full":
        from app.bench.full import FullRecall

        return FullRecall(services)
    from app.bench.baselines import BaselineRetriever

    return BaselineRetriever(services, pipeline)


async def memories_for(services: Services, vault: Vault, hits: Sequence[int | Hit]) -> list[Memory]:
    """The returned blocks in their order, with text and provenance (turn ids, sessions)."""
    hits = [h if isinstance(h, Hit) else Hit(int(h)) for h in hits]
    if not hits:
        return []
    ids = [h.block_id for h in hits]
    rows = await services.db.fetchall(_PROVENANCE_SQL, (vault.id, ids), vault_id=vault.id)
    by_id = {int(r["id"]): r for r in rows}
    out: list[Memory] = []
    for h in hits:
        r = by_id.get(h.block_id)
        if r is None:
            continue
        sessions = [r["session_id"], *r["seen_sessions"]]
        out.append(Memory(text=h.text if h.text is not None else r["content"],
                          turn_ids=frozenset(int(t) for t in [*r["source_turn_ids"], *r["seen_turns"]] if t),
                          sessions=tuple(dict.fromkeys(s for s in sessions if s)), block_id=h.block_id))
    return out


async def timed_recall(retriever: Retriever, vault: Vault, query: str, *, as_of: datetime | None,
                       n: int) -> tuple[list[int | Hit], float]:
    t0 = time.perf_counter()
    hits = await retriever(vault, query, as_of=as_of, n=n)
    return hits, (time.perf_counter() - t0) * 1000.0


@dataclass(slots=True)
class IngestStats:
    turns: int = 0
    seconds: float = 0.0

    @property
    def turns_per_s(self) -> float:
        return self.turns / self.seconds if self.seconds > 0 else 0.0


async def ensure_ann_index(services: Services, vault_id) -> None:
    """The vault's own HNSW index once it is large enough (app/db/ann_index.py): the worker's
    ``build_ann_indexes`` job does it within a minute, a benchmark writing without a worker does it itself."""
    from app.db.ann_index import ensure

    await ensure(services.db, vault_id)


async def ensure_rail2(services: Services, vault_id) -> None:
    """The second dense rail's vectors of the vault (when configured): the worker's ``embed_rail2`` job embeds
    them within a minute or so of the write; a benchmark writing without a worker does it itself."""
    from app.read.rail2 import fill

    await fill(services, vault_id=vault_id)


async def ensure_graph(services: Services, vault_id, *, graph: bool | None = None) -> None:
    """The vault's knowledge graph and its centrality (when ``graph``; default ``MEMVAULT_BENCH_GRAPH``): the
    worker's ``build_graph`` job runs after each write and ``graph_centrality`` within 10 minutes; a benchmark
    writing without a worker does both itself, for every block at once (not timed as ingest)."""
    if not (bench_settings().bench_graph if graph is None else graph):
        return
    from app.background.centrality import GraphCentrality
    from app.write.graph import GraphBuild

    rows = await services.db.fetchall("SELECT id FROM memvault.block WHERE vault_id = %s ORDER BY id", (vault_id,),
                                      vault_id=vault_id)
    ids = [r["id"] for r in rows]
    build = GraphBuild(services)
    for i in range(0, len(ids), 1000):
        await build.run(vault_id, ids[i:i + 1000])
    await GraphCentrality(services.db).score_due(vault_id)


async def ingest_sessions(services: Services, vault: Vault, sessions: Sequence[Session], *, close: bool,
                          stats: IngestStats, graph: bool | None = None) -> dict[str, tuple[int, ...]]:
    """Every session through the write track's bulk path (app/write/bulk.py), in date order: batches of turns
    across sessions, or, with ``close``, each session appended then closed (the API path's order of blocks).
    Two sessions given one id are two sessions (the second written as ``<id>#2``, see ``distinct_session_ids``).

    Returns each session's archived turn ids, in turn order.
    """
    from app.importers.datasets import distinct_session_ids
    from app.write.bulk import BulkIngest, SessionIn
    from app.write.sessions import TurnIn

    sessions = distinct_session_ids(sessions)
    bulk = BulkIngest(services, sessions=services.sessions)
    ordered = [SessionIn(s.id, [TurnIn(t.role, t.content, s.date) for t in s.turns])
               for s in sorted(sessions, key=lambda s: s.date) if s.turns]
    t0 = time.perf_counter()
    results = await bulk.sessions(vault, ordered, close=close)
    stats.seconds += time.perf_counter() - t0
    stats.turns += sum(len(s.turns) for s in ordered)
    turn_ids = {r.session_id: tuple(r.turn_ids) for r in results}
    await ensure_ann_index(services, vault.id)  # what the worker would do within a minute (not timed)
    await ensure_rail2(services, vault.id)
    await ensure_graph(services, vault.id, graph=graph)  # default: MEMVAULT_BENCH_GRAPH
    return turn_ids


async def analyze_blocks(services: Services, vaults: Iterable[Vault] = (), *, vacuum: bool = False) -> None:
    """Refresh the statistics of the block table after a bulk ingest, as the background would: the planner's
    (autovacuum, within a minute) and the lexeme counts of ``vaults`` (the ``refresh_lexeme_stats`` job, within
    5 minutes), from which the sparse rail takes its terms and idf. A benchmark asks right after writing, so it
    refreshes them itself (not timed as ingest).

    ``vacuum`` also does what autovacuum does next, for the whole database: on the block table that took many
    inserts it sets the hint bits and the visibility map and merges the GIN pending list (right after filling
    100,000 memories, fast recall measured p50/p95 66/91 ms; after this vacuum 50/68 ms, the state the table is
    in a minute later), and it clears the system catalogs of the tables that dropped vaults' graphs left behind
    (60 vaults created and dropped, then 10,000 memories: fast p95 49 ms, against 32 on a settled database;
    a report drops 64 benchmark vaults right before its latency runs)."""
    from app.read.lexeme_stats import refresh

    for vault in vaults:
        await refresh(services, vault.id)
        await ensure_ann_index(services, vault.id)
        await ensure_rail2(services, vault.id)
    if not vacuum:
        async with services.db.transaction() as conn:
            await conn.execute("ANALYZE memvault.block")
        return
    import psycopg

    async with await psycopg.AsyncConnection.connect(services.db.url, autocommit=True) as conn:
        await conn.execute("VACUUM (ANALYZE)")
