"""``memvault bench latency --memories N --vaults V``: the same N memories spread across V vaults (N / V each, every
vault its own slice of the corpus), fast recalls round-robin over the vaults; and, for any run, the ANN quality of
each vault's own HNSW index: recall@10 against exact search of the same vault, for the dev files' real questions,
at several ``hnsw.ef_search``, on two fixed halves of them (``split_questions``): the even-numbered ones an ef choice
may look at, the odd-numbered ones reported (the ef rule, ``memvault.ann_ef_search_v1``, was calibrated on the first
100, which the check used alone until then: docs/ann-params.md).

A vault's index is partial (``WHERE vault_id = ...``, app/db/ann_index.py), so its graph holds that vault's rows
only: the filter cannot cost recall the way pgvector's post-filtering does over one index of every vault. A vault
below 5,000 memories has no index and is searched exactly (recall 1 by construction; reported as such).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from psycopg import sql

EF_SEARCH = (40, 100)  # 40: pgvector's default
# Questions a half at most: the ANN check's exact searches scan the whole vault (~0.7 s a question at a million rows
# on one core, docs/ann-params.md), so each half is thinned evenly to this many (never the first ones).
ANN_QUESTIONS_PER_HALF = 140
SPLIT = ("even-numbered questions (0, 2, ...) are the choosing half, the only ones an ef choice may look at; "
         "odd-numbered ones are the reported half, never used to choose; each half at most "
         f"{ANN_QUESTIONS_PER_HALF}, taken evenly across it")


ANN_SEARCH = ("SELECT id FROM memvault.block WHERE vault_id = %s AND embedding IS NOT NULL "
              "ORDER BY embedding <=> %s LIMIT %s")
# Exact search: ``+ 0`` keeps the HNSW index out of its plan whatever the settings. Not the ANN statement under
# ``enable_indexscan = off``: psycopg prepares a statement run five times on a connection, and the server's cached
# generic plan of it (a sequential scan, planned under those settings) then served the ANN passes on that
# connection too, as exact search: recall 1 at every ef.
EXACT_SEARCH = ("SELECT id FROM memvault.block WHERE vault_id = %s AND embedding IS NOT NULL "
                "ORDER BY (embedding <=> %s) + 0 LIMIT %s")


def split_questions(n: int, per_half: int = ANN_QUESTIONS_PER_HALF) -> tuple[list[int], list[int]]:
    """(choosing, reported): indices into ``n`` questions, even-numbered and odd-numbered, each half thinned evenly
    to at most ``per_half`` (the j-th of ``per_half`` picks at j * len / per_half: from the whole half)."""
    if per_half < 1:
        raise ValueError("per_half must be at least 1")

    def thin(half: list[int]) -> list[int]:
        return half if len(half) <= per_half else [half[j * len(half) // per_half] for j in range(per_half)]

    return thin(list(range(0, n, 2))), thin(list(range(1, n, 2)))


def _mean(xs: list[float]) -> float | None:
    return round(sum(xs) / len(xs), 4) if xs else None


async def ann_recall(services: Any, vaults: list[Any], questions: list[str], *, k: int = 10,
                     ef_base: int = 100, per_half: int = ANN_QUESTIONS_PER_HALF) -> dict[str, Any]:
    """recall@k of each indexed vault's HNSW search against exact search in it, per ef_search, averaged over
    vaults and the questions of each half (``split_questions``): ``recall_at_k`` is the reported half's (held out
    from any ef choice, the number to publish), ``choosing_recall_at_k`` the choosing half's. With the settings
    used, how many vaults had an index, and the exact pass's seconds."""
    indexed = []
    for v in vaults:
        row = await services.db.fetchone("SELECT memvault.has_ann_index_v1(%s) AS has", (v.id,))
        if row and row["has"]:
            indexed.append(v)
    # the parameters the (first) vault's index was built with, which may not be the definition's yet
    # (memvault.ann_index_options_v1: the worker rebuilds it)
    row = await services.db.fetchone(
        "SELECT coalesce((SELECT options FROM memvault.vault_ann_indexes WHERE vault_id = %s), "
        "memvault.ann_index_options_v1()) AS o", (indexed[0].id if indexed else None,))
    hnsw = {"m": 16, "ef_construction": 64} | {  # pgvector's defaults, for an option left unset
        k_: int(v_) for k_, v_ in (o.split("=", 1) for o in row["o"] or [])}
    choosing, reported = split_questions(len(questions), per_half)
    out: dict[str, Any] = {"hnsw": hnsw, "k": k, "vaults_indexed": len(indexed), "vaults": len(vaults),
                           "questions": {"of": len(questions), "choosing": len(choosing), "reported": len(reported),
                                         "split": SPLIT}}
    if not indexed:
        out["note"] = "no vault reached 5,000 memories: every search is exact (recall 1 by construction)"
        return out
    asked = choosing + reported
    vecs = await asyncio.to_thread(lambda: {i: services.embedder.embed_query(questions[i]) for i in asked})
    exact: dict[tuple[int, int], set[int]] = {}
    t0 = time.perf_counter()
    async with services.db.transaction() as conn:
        for vi, v in enumerate(indexed):
            for qi in asked:
                got = await (await conn.execute(EXACT_SEARCH, (v.id, vecs[qi], k))).fetchall()
                exact[vi, qi] = {r["id"] for r in got}
    out["exact_s"] = round(time.perf_counter() - t0, 1)
    # and the value recall itself runs at in these vaults (search.ef_search, grown with the index's rows:
    # memvault.ann_ef_search_v1)
    runs_at = {int((await services.db.fetchone("SELECT memvault.ann_ef_search_v1(%s, %s) AS ef",
                                                (v.id, ef_base)))["ef"]) for v in indexed}
    out["recall_runs_at"] = sorted(runs_at)
    for ef in sorted(set(EF_SEARCH) | runs_at):
        hits: dict[int, list[float]] = {qi: [] for qi in asked}
        ms = []
        async with services.db.transaction() as conn:
            await conn.execute(sql.SQL("SET LOCAL hnsw.ef_search = {}").format(sql.Literal(ef)))
            plan = await (await conn.execute("EXPLAIN " + ANN_SEARCH, (indexed[0].id, vecs[asked[0]], k))).fetchall()
            out["index_used"] = any("block_ann_" in next(iter(r.values())) for r in plan)
            for vi, v in enumerate(indexed):
                for qi in asked:
                    t = time.perf_counter()
                    got = {r["id"] for r in await (await conn.execute(ANN_SEARCH, (v.id, vecs[qi], k))).fetchall()}
                    ms.append((time.perf_counter() - t) * 1000)
                    want = exact[vi, qi]
                    hits[qi].append(len(got & want) / max(1, len(want)))
        ms.sort()
        out[f"ef_search_{ef}"] = {"recall_at_k": _mean([h for qi in reported for h in hits[qi]]),
                                  "choosing_recall_at_k": _mean([h for qi in choosing for h in hits[qi]]),
                                  "p50_ms": round(ms[len(ms) // 2], 2), "p95_ms": round(ms[int(len(ms) * 0.95)], 2)}
    return out


async def run_spread(services: Any, n: int, vaults: int, *, queries: int, batch: int, keep: bool,
                     slow_queries: int = 0) -> dict[str, Any]:
    """N memories across ``vaults`` vaults named latency-spread-NNNN (kept with ``keep``, refilled only if short:
    a fill stopped midway goes on from where it stopped). Fast recalls, then ``slow_queries`` slow ones,
    round-robin over the vaults; disk and memory as for one vault (app/bench/footprint.py)."""
    from app.bench.corpus import corpus, fill, percentile, vault_memories
    from app.bench.footprint import footprint
    from app.bench.runtime import progress
    from app.read.config import RecallOptions
    from app.read.recall import recall
    from app.vaults import drop_vault, get_or_create_vault

    per = max(1, n // vaults)
    made = [await get_or_create_vault(services.db, f"latency-spread-{i:04d}") for i in range(vaults)]
    try:
        t0, memories, ingest_s, added = time.perf_counter(), 0, 0.0, 0
        bar = progress(vaults, "vaults", "vault")
        for i, v in enumerate(made):
            before = await vault_memories(services, v)
            have, seconds = await fill(services, v, per, batch, skip=i * per, quiet=True)
            memories, ingest_s, added = memories + have, ingest_s + seconds, added + have - before
            bar.update(1)
        bar.close()
        _, qs = await asyncio.to_thread(corpus)
        qs = qs or ["What did I say about my trip?"]
        for i in range(10):  # warm caches and pools
            await recall(services, made[i % vaults], qs[i % len(qs)], RecallOptions(thinking="fast",
                                                                                  use_prefetch=False))
        fast: list[float] = []
        for i in range(queries):
            t = time.perf_counter()
            await recall(services, made[(i * 7919) % vaults], qs[(10 + i) % len(qs)],
                         RecallOptions(thinking="fast", use_prefetch=False))
            fast.append((time.perf_counter() - t) * 1000)
        slow: list[float] = []
        for i in range(slow_queries):
            t = time.perf_counter()
            await recall(services, made[(i * 7919) % vaults], qs[(10 + i) % len(qs)],
                         RecallOptions(thinking="slow", use_prefetch=False))
            slow.append((time.perf_counter() - t) * 1000)
        ann = await ann_recall(services, made, qs)
        held = await footprint(services, made[0])
        return {"memories": memories, "vaults": vaults, "per_vault": per,
                "fast_p50_ms": percentile(fast, 50), "fast_p95_ms": percentile(fast, 95),
                "fast_p99_ms": percentile(fast, 99),
                "slow_p50_ms": percentile(slow, 50), "slow_p95_ms": percentile(slow, 95),
                "slow_p99_ms": percentile(slow, 99),
                "ingest_per_s": round(added / ingest_s, 1) if ingest_s > 0 and added > 0 else None,
                "ingested": added, "db_mb": held["disk_mb"]["database"], **held, "ann": ann,
                "wall_s": round(time.perf_counter() - t0, 1)}
    finally:
        await services.read.drain()
        if not keep:
            for v in made:
                await drop_vault(services.db, v.name)
