"""Baseline retrievers for the benchmarks: dense-only, sparse-only and plain RRF, without scoring or graph.

They read ``memvault.block`` directly (the sparse one its narrow copy ``memvault.block_terms``: the tsvector
and the same time columns, kept in step by triggers; block.tsv has no index of its own since revision 0029),
filtered to the vault (row-level security scopes the statement too) and to what was valid at ``as_of`` and not
retracted, so the report shows what each stage of the read track adds on the same data. They are the reference
queries of pgvector-python and Postgres full-text search, not the read track's tuned SQL (``fast_search_v1``):
that one is measured as the ``full`` pipeline.

Dense search is exact (the ``+ 0`` keeps the planner off the HNSW index, whose post-filtered scan returns
at most ``ef_search`` rows): a benchmark vault holds a few thousand blocks at most.

The statements live here rather than in ``sql/`` because they are benchmark instruments, not part of the
service's SQL API; they take only bound parameters.
"""

from __future__ import annotations

import asyncio
from datetime import datetime

from app.services import Services
from app.vaults import Vault

RRF_K = 60  # Cormack et al.'s constant, the usual default
RRF_CANDIDATES = 100  # per rail, as the read track's fast search

_VALID = """
    b.vault_id = %(vault)s AND b.retracted_at IS NULL
    AND b.valid_at <= coalesce(%(as_of)s::timestamptz, now())
    AND (b.invalid_at IS NULL OR b.invalid_at > coalesce(%(as_of)s::timestamptz, now()))
"""

DENSE_SQL = f"""
SELECT b.id FROM memvault.block b
WHERE {_VALID} AND b.embedding IS NOT NULL
ORDER BY (b.embedding <=> %(qvec)s) + 0, b.id
LIMIT %(n)s
"""

SPARSE_SQL = f"""
SELECT b.block_id AS id FROM memvault.block_terms b, memvault.sparse_query_v1(%(query)s) AS q
WHERE {_VALID} AND b.tsv @@ q
ORDER BY ts_rank_cd(b.tsv, q) DESC, b.block_id
LIMIT %(n)s
"""

RRF_SQL = f"""
WITH dense AS (
    SELECT b.id, row_number() OVER (ORDER BY (b.embedding <=> %(qvec)s) + 0, b.id) AS r
    FROM memvault.block b
    WHERE {_VALID} AND b.embedding IS NOT NULL
    ORDER BY (b.embedding <=> %(qvec)s) + 0, b.id
    LIMIT %(cand)s
), sparse AS (
    SELECT b.block_id AS id, row_number() OVER (ORDER BY ts_rank_cd(b.tsv, q) DESC, b.block_id) AS r
    FROM memvault.block_terms b, memvault.sparse_query_v1(%(query)s) AS q
    WHERE {_VALID} AND b.tsv @@ q
    ORDER BY ts_rank_cd(b.tsv, q) DESC, b.block_id
    LIMIT %(cand)s
)
SELECT coalesce(d.id, s.id) AS id
FROM dense d FULL JOIN sparse s ON s.id = d.id
ORDER BY coalesce(1.0 / (%(k)s + d.r), 0) + coalesce(1.0 / (%(k)s + s.r), 0) DESC, coalesce(d.id, s.id)
LIMIT %(n)s
"""

BASELINES = ("dense", "sparse", "rrf")


class BaselineRetriever:
    """``await retriever(vault, query, as_of=..., n=...)`` -> block ids, best first."""

    def __init__(self, services: Services, pipeline: str) -> None:
        if pipeline not in BASELINES:
            raise ValueError(f"unknown baseline {pipeline!r}; one of {', '.join(BASELINES)}")
        self.services = services
        self.pipeline = pipeline

    async def __call__(self, vault: Vault, query: str, *, as_of: datetime | None, n: int) -> list[int]:
        params: dict = {"vault": vault.id, "as_of": as_of, "n": n, "query": query}
        if self.pipeline != "sparse":
            params["qvec"] = await asyncio.to_thread(self.services.embedder.embed_query, query)
        sql = {"dense": DENSE_SQL, "sparse": SPARSE_SQL, "rrf": RRF_SQL}[self.pipeline]
        if self.pipeline == "rrf":
            params |= {"cand": max(n, RRF_CANDIDATES), "k": RRF_K}
        rows = await self.services.db.fetchall(sql, params, vault_id=vault.id)
        return [int(r["id"]) for r in rows]
