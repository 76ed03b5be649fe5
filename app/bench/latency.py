"""``memvault bench latency --memories N``: recall latency at scale, through the real write and read tracks.

A vault of N memories is filled with real conversational text (the sentences of the LongMemEval and LoCoMo dev
files; when N needs more, sentences are paired with their neighbours, which varies them without making up
words) through the write track's bulk path, in batches. The vault's own HNSW index is then built once, from
scratch (``index_build_s``: what a restore or a re-embed costs; the worker's build_ann_indexes job would build it
within a minute), and the table vacuumed and analyzed, as autovacuum would. Queries
are the files' real questions: ``fast`` forces thinking mode fast, ``slow`` the same queries forced slow
(multi-query, cascade recall, CRAG) with the offline default models. Every recall is the full ``recall``
(classify, search, scoring, rerank gate, sanitize, format, write-back and recall_log), query embedding included.

``--vault NAME --keep`` keeps the vault for another run: a vault that already holds N memories is not refilled
(the run goes straight to the queries, its index kept unless ``--reindex``), and a fill stopped midway goes on
from where it stopped (app/bench/corpus.py). The result also says what the vault costs to hold: disk and memory
(app/bench/footprint.py), with the HNSW build settings and the ef_search recall runs at.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from app.bench.corpus import corpus, fill, percentile, texts, vault_memories  # noqa: F401  (callers import them)

KEYS = ("memories", "fast_p50_ms", "fast_p95_ms", "fast_p99_ms", "slow_p50_ms", "slow_p95_ms", "slow_p99_ms",
        "fast_cpu_ms", "slow_cpu_ms", "ingest_per_s", "ingested", "db_mb", "index_build_s", "ef_search", "disk_mb",
        "memory_mb", "asked_as_of")


def add_parser(bench_sub: argparse._SubParsersAction) -> None:
    p = bench_sub.add_parser("latency", help="fast/slow recall latency in a vault of N memories")
    p.add_argument("--memories", type=int, required=True, help="memories in the vault (e.g. 10000, 100000)")
    p.add_argument("--queries", type=int, default=200, help="fast-path queries measured (default 200)")
    p.add_argument("--slow-queries", type=int, default=60, help="slow-path queries measured (default 60)")
    p.add_argument("--batch", type=int, default=500, help="write-track batch size (default 500)")
    p.add_argument("--vault", help="use (or create) this vault instead of a scratch one")
    p.add_argument("--keep", action="store_true", help="keep the vault afterwards (with --vault)")
    p.add_argument("--vaults", type=int, default=1, help="spread the memories across this many vaults "
                   "(latency-spread-NNNN; fast queries round-robin; default 1)")
    p.add_argument("--json", dest="json_path", type=Path, help="write the result keys to this file")
    p.add_argument("--reindex", action="store_true",
                   help="rebuild the vault's HNSW index (timed) even when a kept vault has one")
    p.add_argument("--build-memory", dest="build_memory", metavar="SIZE",
                   help="maintenance_work_mem for the index build (e.g. 3GB: a million 512-d vectors' graph "
                        "needs ~2.5 GB, and a build that outgrows it is many times slower); default the cluster's")
    p.add_argument("--read", metavar="LEVER=V",
                   help="one read setting other than the default (e.g. search.sparse_bm25=true; the --tune syntax "
                        "of bench locomo with one value): recall runs with it")
    p.set_defaults(func=handler)


async def build_index(services: Any, vault: Any, *, rebuild: bool, memory: str | None) -> float | None:
    """Build the vault's own HNSW index (drop and build again when ``rebuild``) with the DDL the worker runs, not
    concurrently (nothing else writes the vault); seconds, or None when it had one and was left alone (or is too
    small for one)."""
    import psycopg
    from psycopg import sql

    from app.db.ann_index import MIN_BLOCKS, has_index

    row = await services.db.fetchone("SELECT memvault.vault_block_count_v1(%s) AS n, memvault.ann_index_name_v1(%s) "
                                     "AS name", (MIN_BLOCKS, vault.id), vault_id=vault.id)
    if int(row["n"]) < MIN_BLOCKS or (not rebuild and await has_index(services.db, vault.id)):
        return None
    t0 = time.perf_counter()
    async with await psycopg.AsyncConnection.connect(services.db.ddl_url, autocommit=True) as conn:
        if memory:
            await conn.execute(sql.SQL("SET maintenance_work_mem = {}").format(sql.Literal(memory)))
        await conn.execute(sql.SQL("DROP INDEX IF EXISTS memvault.{}").format(sql.Identifier(row["name"])))
        ddl = await (await conn.execute("SELECT memvault.ann_index_ddl_v2(%s, false)", (vault.id,))).fetchone()
        await conn.execute(ddl[0])
    return time.perf_counter() - t0


async def drop_index_for_fill(services: Any, vault: Any) -> bool:
    """Drop a kept vault's HNSW index before its fill goes on (it is built again once, after): every insert into
    an indexed vault also walks its graph (2-3 ms of PostgreSQL a memory, against ~0.3 without). A vault whose
    fill stopped past 5,000 memories gets one from anything that builds the due indexes: ``memvault migrate``,
    ``memvault index``, a worker's minute job (the benchmarks' own start no longer does: app/bench/runtime.py)."""
    import psycopg
    from psycopg import sql

    from app.db.ann_index import has_index

    if not await has_index(services.db, vault.id):
        return False
    row = await services.db.fetchone("SELECT memvault.ann_index_name_v1(%s) AS name", (vault.id,))
    async with await psycopg.AsyncConnection.connect(services.db.ddl_url, autocommit=True) as conn:
        await conn.execute(sql.SQL("DROP INDEX IF EXISTS memvault.{}").format(sql.Identifier(row["name"])))
    return True


async def run_latency(services: Any, n: int, *, queries: int, slow_queries: int, batch: int,
                      vault_name: str | None, keep: bool, config: Any = None, reindex: bool = False,
                      build_memory: str | None = None) -> dict[str, Any]:
    from contextlib import asynccontextmanager

    from app.bench.cpu import CpuMeter
    from app.bench.footprint import footprint
    from app.bench.harness import analyze_blocks
    from app.bench.runtime import progress, scratch_vault
    from app.read.config import ReadConfig, RecallOptions
    from app.read.recall import ReadTrack
    from app.vaults import drop_vault, get_or_create_vault

    track = ReadTrack(services, config) if config is not None else ReadTrack.of(services)
    recall = track.recall
    cpu = CpuMeter(services.db)

    @asynccontextmanager
    async def named():
        v = await get_or_create_vault(services.db, vault_name)
        try:
            yield v
        finally:
            if not keep:
                await drop_vault(services.db, vault_name)

    ctx = named() if vault_name else scratch_vault(services, "latency")
    async with ctx as vault:
        t0 = time.perf_counter()
        before = await vault_memories(services, vault)
        if before < n:
            await drop_index_for_fill(services, vault)
        memories, ingest_s = await fill(services, vault, n, batch, build_ann_index=False)
        # Built once, after the fill (the bulk path's own way: app/write/bulk.py); a kept vault's stays.
        index_build_s = await build_index(services, vault, rebuild=reindex or memories > before, memory=build_memory)
        await analyze_blocks(services, [vault], vacuum=memories > before)
        _, qs = await asyncio.to_thread(corpus)
        qs = qs or ["What did I say about my trip?"]
        pick = [qs[i % len(qs)] for i in range(max(queries, slow_queries) + 10)]
        # Asked as of the vault's last memory when its fill ran past now (a vault filled before fill_step spaced a
        # large fill within the past): otherwise recall filters the later memories out as not yet valid.
        as_of = await asked_as_of(services, vault)
        for q in pick[:10]:  # warm caches and pools
            await recall(vault, q, RecallOptions(thinking="fast", use_prefetch=False, as_of=as_of))
        for q in pick[:2]:  # ... and the slow path's models (the second rail's loads on first use, ~1 s)
            await recall(vault, q, RecallOptions(thinking="slow", use_prefetch=False, as_of=as_of))

        await track.drain()

        async def timed(thinking: str, count: int) -> list[float]:
            """Milliseconds of each recall forced to ``thinking``, query embedding included; the CPU of them all
            (this process and its PostgreSQL backends, write-backs drained) in ``cpu.use[thinking]``."""
            out: list[float] = []
            bar = progress(count, thinking, "q")
            async with cpu(thinking):
                for q in pick[10:10 + count]:
                    t = time.perf_counter()
                    await recall(vault, q, RecallOptions(thinking=thinking, use_prefetch=False, as_of=as_of))
                    out.append((time.perf_counter() - t) * 1000)
                    bar.update(1)
                await track.drain()
            bar.close()
            return out

        fast = await timed("fast", queries)
        slow = await timed("slow", slow_queries)
        from app.bench.spread import ann_recall

        ef_base = (config or ReadConfig()).search.ef_search
        ann = await ann_recall(services, [vault], qs, ef_base=ef_base)
        held = await footprint(services, vault)
        added = memories - before
        return {
            "memories": memories,
            "fast_p50_ms": percentile(fast, 50), "fast_p95_ms": percentile(fast, 95),
            "fast_p99_ms": percentile(fast, 99),
            "slow_p50_ms": percentile(slow, 50), "slow_p95_ms": percentile(slow, 95),
            "slow_p99_ms": percentile(slow, 99),
            "fast_cpu_ms": cpu_ms(cpu, "fast", len(fast)), "slow_cpu_ms": cpu_ms(cpu, "slow", len(slow)),
            "ingest_per_s": round(added / ingest_s, 1) if ingest_s > 0 and added > 0 else None,
            "ingested": added,
            "db_mb": held["disk_mb"]["database"],
            "index_build_s": round(index_build_s, 2) if index_build_s is not None else None,
            # what recall ran its HNSW scans at: search.ef_search, grown with the vault (ann_ef_search_v1)
            "ef_search": (ann.get("recall_runs_at") or [ef_base])[0],
            **held,
            "wall_s": round(time.perf_counter() - t0, 1),
            "asked_as_of": as_of.isoformat() if as_of else None,
            "ann": ann,
        }


async def asked_as_of(services: Any, vault: Any) -> Any:
    """The instant just after the vault's last memory when that is later than now; else None (recall as of now)."""
    from datetime import UTC, datetime, timedelta

    from app.bench.corpus import last_said

    last = await last_said(services, vault)
    return last + timedelta(seconds=1) if last is not None and last > datetime.now(UTC) else None


def cpu_ms(cpu: Any, section: str, n: int) -> dict[str, float | None] | None:
    """CPU ms per recall of ``section``: this process (query embedding, classification, formatting, the event
    loop), its PostgreSQL backends, and their sum (what a recall costs the machine, whatever else runs on it)."""
    use = cpu.per_item_ms(section, n)
    if use is None:
        return None
    pg = use["postgres"]
    return {"process": use["writer"], "postgres": pg,
            "total": round(use["writer"] + pg, 3) if pg is not None else None}


def _cpu_cell(c: dict[str, float | None] | None) -> str:
    if not c:
        return "n/a"
    return f"{c['total']} ({c['process']} process + {c['postgres']} PostgreSQL)" if c["total"] is not None \
        else f"{c['process']} process (PostgreSQL backends not readable)"


def ann_rows(ann: dict[str, Any]) -> list[tuple[str, str]]:
    """The ANN check's table lines: recall@10 against exact per ef_search, the reported half's (held out from any
    ef choice) and the choosing half's, each saying which questions it is (app/bench/spread.py split_questions)."""
    q = ann["questions"]
    efs = [(k[len("ef_search_"):], v) for k, v in ann.items() if k.startswith("ef_search_")]
    if not efs:
        return [("ANN recall@10 vs exact", ann.get("note", ""))]
    return [(f"ANN recall@10 vs exact, REPORTED half (odd-numbered dev questions: {q['reported']} of {q['of']})",
             " ".join(f"{ef}: {v['recall_at_k']}" for ef, v in efs)),
            (f"ANN recall@10 vs exact, choosing half (even-numbered: {q['choosing']}; ef may be tuned on it)",
             " ".join(f"{ef}: {v['choosing_recall_at_k']}" for ef, v in efs))]


def format_table(r: dict[str, Any]) -> str:
    disk, mem = r["disk_mb"], r["memory_mb"]
    pg = mem["postgres"] or {}
    ann = r["ann"]
    rows = [("memories", r["memories"]), ("asked as of", r.get("asked_as_of") or "now"),
            ("fast p50 / p95 / p99 ms", f"{r['fast_p50_ms']} / {r['fast_p95_ms']} / {r['fast_p99_ms']}"),
            ("slow p50 / p95 / p99 ms", f"{r['slow_p50_ms']} / {r['slow_p95_ms']} / {r['slow_p99_ms']}"),
            ("fast CPU ms per recall", _cpu_cell(r.get("fast_cpu_ms"))),
            ("slow CPU ms per recall", _cpu_cell(r.get("slow_cpu_ms"))),
            ("ingest memories/s", f"{r['ingest_per_s']} ({r['ingested']} written by this run)"),
            ("index build s", r["index_build_s"] if r["index_build_s"] is not None else "kept (not rebuilt)"),
            ("HNSW / ef_search", f"m {ann['hnsw']['m']}, ef_construction {ann['hnsw']['ef_construction']} / "
             f"{r['ef_search']}"),
            *ann_rows(ann),
            ("disk MB: database / block table / its indexes / vault HNSW",
             f"{disk['database']} / {disk['block_table']} / {disk['block_indexes']} / {disk['vault_hnsw_index']}"),
            ("memory: PG shared_buffers / PG RSS private, shared MB / bench peak RSS MB",
             f"{mem['postgres_shared_buffers']} / {pg.get('private_rss_mb')}, {pg.get('shared_rss_mb')} / "
             f"{mem['bench_process_peak_rss_mb']}")]
    width = max(len(k) for k, _ in rows)
    return "\n".join(["Latency (recall, query embedding included)"] + [f"  {k:<{width}}  {v}" for k, v in rows])


def handler(args: argparse.Namespace) -> int:
    from app.bench.runtime import run_bench, write_json

    config = None
    if args.read:
        from app.bench.folds import read_settings

        try:
            settings = read_settings(args.read)
        except ValueError as exc:
            raise SystemExit(f"bench latency: {exc}") from exc
        if len(settings) != 1:
            raise SystemExit(f"bench latency: --read takes one value, got {args.read!r}")
        config = next(iter(settings.values()))

    async def core(services: Any) -> dict[str, Any]:
        if args.vaults > 1:
            from app.bench.spread import run_spread

            return await run_spread(services, args.memories, args.vaults, queries=args.queries, batch=args.batch,
                                    keep=args.keep, slow_queries=args.slow_queries)
        return await run_latency(services, args.memories, queries=args.queries, slow_queries=args.slow_queries,
                                 batch=args.batch, vault_name=args.vault, keep=args.keep, config=config,
                                 reindex=args.reindex, build_memory=args.build_memory)

    if args.vaults < 1 or args.vaults > args.memories:
        print("memvault: --vaults: between 1 and --memories", file=sys.stderr)
        return 2
    result = run_bench(core)
    if args.vaults > 1:
        print(json.dumps(result, indent=2))
        write_json(args.json_path, result)
        return 0
    print(format_table(result))
    print("ANN (each vault's own HNSW index against exact search): " + json.dumps(result["ann"]))
    write_json(args.json_path, {**{k: result[k] for k in KEYS}, "ann": result["ann"]})
    return 0
