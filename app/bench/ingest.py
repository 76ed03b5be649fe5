"""``memvault bench ingest``: turns per second through the whole write track, and milliseconds per stage.

Real conversational text: the turns of the LoCoMo and LongMemEval files in ``../shared/eval`` (paths can
be given), replayed as sessions at their own dates into a fresh vault, with the configured embedder
(``MEMVAULT_EMBEDDER``, the default ``use`` when unset) and the heuristic LLM, every gate on, one writer process. Two paths, each into its own vault:

- ``api``: what a client gets, one ``append_turns`` call per session (archive, chunking, normalize, NoiseFilter,
  InjectionGuard + PoisoningDetector, embed, Dedup, persist, commit), then the session's close (atomic units +
  summary through the same gates);
- ``bulk``: the import path (app/write/bulk.py): batches of up to ``--batch`` turns across sessions, the next
  batch screened (normalized, gated, embedded) while this one is decided and written; then again with each session
  closed after its turns (one session per batch).

Stage times of appending come from the write track's own StageClock (app/write/timing.py): normalize, gates (NoiseFilter
within them; the rest is InjectionGuard + PoisoningDetector), embed, dedup (id draw, the batch's candidate query, Dedup's decisions),
persist (blocks, merges, sources, audit, graph job), commit; what is left of the wall time is chunking, the turn
archive and the event loop. Session closes are timed on a clock of their own (``close_stage_ms_per_session``).
In the bulk path the stages of two batches overlap, so they can add up to more than the wall time.
"""

from __future__ import annotations

import argparse
import functools
import json
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

from app.importers.datasets import Session
from app.services import Services

STAGES = ("normalize", "gates", "gates.noise", "embed", "dedup", "persist", "commit")
# A session close's own steps besides the write track's: the atomic units and the summary (the LLM's tasks), and
# the thread map (its topics against earlier sessions').
CLOSE_STAGES = ("extract", "thread_map")
# NoiseFilter timed within the gates; the rest of the gates is InjectionGuard + PoisoningDetector (one ruleset
# verdict shared by both).
GATE_STAGES = {"noise": "gates.noise"}


def add_parser(bench_sub: argparse._SubParsersAction) -> None:
    from app.bench.runtime import EVAL_DIR

    p = bench_sub.add_parser("ingest", help="turns/s through the whole write track, and ms per stage")
    p.add_argument("--turns", type=int, default=3000, help="how many turns to write (default 3000)")
    p.add_argument("--locomo", type=Path, default=EVAL_DIR / "locomo_dev.json", help="LoCoMo file for text")
    p.add_argument("--longmemeval", type=Path, default=EVAL_DIR / "longmemeval_s_dev.json.gz",
                   help="LongMemEval file for text")
    p.add_argument("--close-sessions", action=argparse.BooleanOptionalAction, default=True,
                   help="close each session (atomic units + summary); default on")
    p.add_argument("--path", choices=("api", "bulk", "both"), default="both",
                   help="api: one append_turns call per session; bulk: the import path; both (default)")
    p.add_argument("--batch", type=int, default=256, help="bulk path: turns (or memories) per batch (default 256)")
    p.add_argument("--in-flight", dest="in_flight", type=int, default=1,
                   help="api path: sessions written at once by the one process (an agent fleet's concurrent "
                        "append_turns calls; default 1, one call after another)")
    p.add_argument("--memories", type=int, default=0,
                   help="instead of turns: N short memories through the bulk path (the sentences bench latency "
                        "fills a vault with), with the rate of each tenth of the run as the vault grows")
    p.add_argument("--exact-below", dest="exact_below", type=int, default=None,
                   help="bulk path: the vault size from which the vector mirror searches through its HNSW graph "
                        "(default MirrorConfig's; a number above the run's size keeps every search exact)")
    p.add_argument("--screen", choices=("thread", "process"), default=None,
                   help="bulk path: screen the batches (normalize, embed, gates) in the model threads or in a "
                        "process of its own (default: BulkConfig's)")
    p.add_argument("--read-verdict", dest="read_verdict", choices=("write", "recall"), default=None,
                   help="bulk path: judge each memory for the read-time sanitizer while screening (write) or leave "
                        "it to the block's first recall (recall) (default: BulkConfig's, recall)")
    p.add_argument("--save-decisions", dest="save_decisions", type=Path,
                   help="--memories: write each memory's decision and target (the memory that made it) here")
    p.add_argument("--compare-decisions", dest="compare_decisions", type=Path,
                   help="--memories: count the memories whose decision or target differs from a saved run's")
    p.add_argument("--save-rows", dest="save_rows", type=Path,
                   help="api path: write what the vault stores (every memory: kind, category, text, session, "
                        "times, what superseded it, a digest of its vector; no ids) here, sorted, before the "
                        "vault is dropped: two runs that store the same rows write the same file")
    p.add_argument("--json", dest="json_path", type=Path, help="write the result keys to this file")
    p.set_defaults(func=handler)


def handler(args: argparse.Namespace) -> int:
    from app.bench.runtime import run_bench, write_json
    from app.settings import get_settings

    # The configured embedder (the default unless MEMVAULT_EMBEDDER says otherwise: how another embedder's write
    # throughput is measured), the offline LLM and no reranker.
    settings = get_settings().model_copy(update={"llm": "heuristic", "reranker": "none"})
    if args.memories:
        from app.bench.corpus import corpus, texts

        sentences, _ = corpus(args.longmemeval, args.locomo)
        result = run_bench(lambda services: run_bulk_memories(services, list(texts(sentences, args.memories)),
                                                              batch=args.batch, mirror=_mirror_config(args),
                                                              screen=args.screen,
                                                              read_verdict=args.read_verdict),
                           settings)
        per_item = result.pop("per_item")
        if args.save_decisions:
            args.save_decisions.write_text(json.dumps(per_item))
        if args.compare_decisions:
            result["decisions_differing"] = compare_decisions(json.loads(args.compare_decisions.read_text()),
                                                              per_item)
        print(format_memories(result))
        write_json(args.json_path, result)
        return 0
    sessions = corpus_sessions(args.locomo, args.longmemeval, args.turns)

    async def core(services: Services) -> dict:
        out: dict[str, Any] = {}
        if args.path in ("api", "both"):
            out["api"] = await run_ingest(services, sessions, close_sessions=args.close_sessions,
                                          in_flight=args.in_flight, save_rows=args.save_rows)
        if args.path in ("bulk", "both"):
            mirror = _mirror_config(args)
            out["bulk"] = await run_bulk(services, sessions, batch=args.batch, close_sessions=False, mirror=mirror,
                                         screen=args.screen)
            if args.close_sessions:
                out["bulk_close"] = await run_bulk(services, sessions, batch=args.batch, close_sessions=True,
                                                   mirror=mirror, screen=args.screen)
        return out

    result = run_bench(core, settings)
    print(format_table(result))
    write_json(args.json_path, result)
    return 0


def _mirror_config(args: argparse.Namespace) -> Any:
    from app.write.mirror import MirrorConfig

    return MirrorConfig() if args.exact_below is None else MirrorConfig(exact_below=args.exact_below)


def compare_decisions(before: list[list], after: list[list]) -> dict[str, int]:
    """How many memories got another decision, or the same one against another memory's block, than in a saved
    run of the same texts (targets named by the memory that created the block, so two vaults compare)."""
    same = min(len(before), len(after))
    decision = sum(1 for a, b in zip(before, after, strict=False) if a[0] != b[0])
    target = sum(1 for a, b in zip(before, after, strict=False) if a[0] == b[0] and a[1] != b[1])
    return {"memories": same, "decision": decision, "target": target}


def corpus_sessions(locomo: Path | None, longmemeval: Path | None, turns: int) -> list[Session]:
    """Sessions of real chat, alternating between the two sets, until ``turns`` turns (the last one cut). When the
    files hold fewer turns, they are replayed from the start under new session ids (the dev files hold ~30.7k
    distinct turns: past them a run re-imports the same text, which Dedup skips at its exact hash)."""
    from app.importers.datasets import load_locomo, load_longmemeval

    pools: list[list[Session]] = []
    if locomo and locomo.exists():
        pools.append([s for c in load_locomo(locomo) for s in c.sessions])
    if longmemeval and longmemeval.exists():
        seen: set[str] = set()
        pool = []
        for q in load_longmemeval(longmemeval):
            for s in q.sessions:
                if s.id not in seen:  # haystacks share sessions
                    seen.add(s.id)
                    pool.append(s)
        pools.append(pool)
    if not pools:
        raise SystemExit("bench ingest: no text; give --locomo or --longmemeval")
    out: list[Session] = []
    count, i = 0, 0
    iters = [iter(p) for p in pools]
    while count < turns:
        if not iters:
            iters = [iter(p) for p in pools]  # the next pass over the files
        it = iters[i % len(iters)]
        s = next(it, None)
        if s is None:
            iters.remove(it)
            continue
        i += 1
        s = Session(f"{len(out):05d}-{s.id}"[:200], s.date, s.turns[: turns - count])
        if s.turns:
            out.append(s)
            count += len(s.turns)
    return out


def instrument(track: Any, clock: Any) -> None:
    """Time each gate of a SessionTrack's WriteTrack inside the gates stage (this instance only)."""
    gates = track.write.gates
    for attr, stage in GATE_STAGES.items():
        gate = getattr(gates, attr, None)
        if gate is not None and callable(gate):
            setattr(gates, attr, _timed(clock, stage, gate))


def _timed(clock: Any, stage: str, fn):
    @functools.wraps(fn)
    def timed(*a, **kw):
        with clock(stage):
            return fn(*a, **kw)
    return timed


def _api_tracks(services: Services) -> tuple[Any, Any, Any, Any, Any]:
    """The API path's instruments for one run: the stage clocks of the appends and of the closes, the track that
    appends (its stages timed), the track that closes, and the CPU meter."""
    from app.bench.cpu import CpuMeter
    from app.write.sessions import SessionTrack
    from app.write.timing import StageClock

    clock, close_clock = StageClock(), StageClock()
    track = SessionTrack(services, clock=clock)
    instrument(track, clock)
    return clock, close_clock, track, SessionTrack(services, clock=close_clock), CpuMeter(services.db)


# What a vault stores, without ids (they depend on the order of concurrent writers): each memory's kind,
# category, text, session, valid and transaction times, the text of what superseded it, a digest of its vector.
_STORED_ROWS = """
SELECT b.kind, b.category, b.content, b.session_id, b.source_kind, b.confidence::text AS confidence,
       b.valid_at, b.invalid_at IS NOT NULL AS invalid, b.retracted_at IS NOT NULL AS retracted,
       s.content AS superseded_by, md5(b.embedding::text) AS vector, b.token_count, b.fingerprint
  FROM memvault.block b LEFT JOIN memvault.block s ON s.id = b.superseded_by AND s.vault_id = b.vault_id
 WHERE b.vault_id = %s
"""


async def stored_rows(services: Services, vault: Any, path: Path) -> None:
    rows = await services.db.fetchall(_STORED_ROWS, (vault.id,), vault_id=vault.id)
    lines = sorted(json.dumps(r, default=str, sort_keys=True, ensure_ascii=False) for r in rows)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _turns_in(s: Session) -> list[Any]:
    """A benchmark session's turns as the write track takes them, dated by their session."""
    from app.write.sessions import TurnIn

    return [TurnIn(t.role, t.content, s.date) for t in s.turns]


async def run_ingest(services: Services, sessions: list[Session], *, close_sessions: bool = True,
                     show_progress: bool = True, in_flight: int = 1, save_rows: Path | None = None
                     ) -> dict[str, Any]:
    """The API path: one append_turns call per session, then its close. ``in_flight`` > 1: that many sessions
    are written at once (every append first, then every close, each phase timed on the wall clock). The vault's
    HNSW index is built when it crosses its size, as the worker's minute job would (untimed on the sequential
    path; without it, Dedup scans a vault of 9,000 blocks exactly at every call)."""
    if in_flight > 1:
        return await _run_ingest_concurrent(services, sessions, close_sessions=close_sessions,
                                            show_progress=show_progress, in_flight=in_flight, save_rows=save_rows)
    from app.bench.runtime import progress, scratch_vault
    from app.db.ann_index import ensure

    clock, close_clock, track, closer, cpu = _api_tracks(services)
    decisions: Counter[str] = Counter()
    turns = sum(len(s.turns) for s in sessions)
    append_s = close_s = 0.0
    bar = progress(turns, "ingest api", unit="turn") if show_progress else None
    try:
        async with scratch_vault(services, "bench-ingest") as vault:
            for s in sessions:
                async with cpu("append"):
                    t0 = time.perf_counter()
                    res = await track.append_turns(vault, s.id, _turns_in(s))
                    append_s += time.perf_counter() - t0
                decisions.update(r.decision for r in res.chunks)
                if close_sessions:
                    async with cpu("close"):
                        t1 = time.perf_counter()
                        closed = await closer.close(vault, s.id)
                        close_s += time.perf_counter() - t1
                    decisions.update(f"close:{r.decision}" for r in closed.units)
                await ensure(services.db, vault.id)  # the worker's minute job: the vault's index at 5,000 blocks
                if bar is not None:
                    bar.update(len(s.turns))
            if save_rows is not None:
                await stored_rows(services, vault, save_rows)
    finally:
        if bar is not None:
            bar.close()
    total_s = append_s + close_s
    return _result(services, "api", clock, close_clock, decisions, sessions, turns, wall_s=total_s,
                   append_s=append_s, close_s=close_s if close_sessions else None, requeries=track.write.requeries,
                   cpu=cpu)


async def _run_ingest_concurrent(services: Services, sessions: list[Session], *, close_sessions: bool,
                                 show_progress: bool, in_flight: int, save_rows: Path | None = None
                                 ) -> dict[str, Any]:
    import asyncio

    from app.bench.runtime import progress, scratch_vault
    from app.db.ann_index import ensure

    clock, close_clock, track, closer, cpu = _api_tracks(services)
    decisions: Counter[str] = Counter()
    turns = sum(len(s.turns) for s in sessions)
    gate = asyncio.Semaphore(in_flight)
    ensuring = asyncio.Lock()
    bar = progress(turns, f"ingest api x{in_flight}", unit="turn") if show_progress else None

    async def append(vault: Any, s: Session) -> None:
        async with gate:
            res = await track.append_turns(vault, s.id, _turns_in(s))
            if not ensuring.locked():  # the worker's minute job meanwhile, one build at a time
                async with ensuring:
                    await ensure(services.db, vault.id)
        decisions.update(r.decision for r in res.chunks)
        if bar is not None:
            bar.update(len(s.turns))

    async def close(vault: Any, s: Session) -> None:
        async with gate:
            closed = await closer.close(vault, s.id)
        decisions.update(f"close:{r.decision}" for r in closed.units)

    try:
        async with scratch_vault(services, "bench-ingest") as vault:
            async with cpu("append"):
                t0 = time.perf_counter()
                await asyncio.gather(*(append(vault, s) for s in sessions))
                append_s = time.perf_counter() - t0
            async with cpu("close"):
                t1 = time.perf_counter()
                if close_sessions:
                    await asyncio.gather(*(close(vault, s) for s in sessions))
                close_s = time.perf_counter() - t1
            if save_rows is not None:
                await stored_rows(services, vault, save_rows)
    finally:
        if bar is not None:
            bar.close()
    out = _result(services, "api", clock, close_clock, decisions, sessions, turns, wall_s=append_s + close_s,
                  append_s=append_s, close_s=close_s if close_sessions else None, requeries=track.write.requeries,
                  cpu=cpu)
    out["in_flight"] = in_flight
    return out


async def run_bulk(services: Services, sessions: list[Session], *, batch: int = 256, close_sessions: bool = False,
                   show_progress: bool = True, mirror: Any = None, screen: str | None = None) -> dict[str, Any]:
    """The bulk path (app/write/bulk.py) into a fresh vault; with ``close_sessions`` each session is closed after
    its turns."""
    from app.bench.cpu import CpuMeter
    from app.bench.runtime import progress, scratch_vault
    from app.write.bulk import BulkIngest, SessionIn
    from app.write.sessions import SessionTrack
    from app.write.timing import StageClock

    clock, close_clock = StageClock(), StageClock()
    bulk = BulkIngest(services, _bulk_config(batch, mirror, screen), clock=clock)
    instrument(bulk.sessions_track, clock)
    closer = SessionTrack(services, clock=close_clock)
    close_s = 0.0
    decisions: Counter[str] = Counter()

    async def timed_close(*a, **kw):
        nonlocal close_s
        t1 = time.perf_counter()
        try:
            closed = await closer.close(*a, **kw)
        finally:
            close_s += time.perf_counter() - t1
        decisions.update(f"close:{r.decision}" for r in closed.units)
        return closed

    bulk.sessions_track.close = timed_close  # type: ignore[method-assign]
    turns = sum(len(s.turns) for s in sessions)
    inputs = [SessionIn(s.id, _turns_in(s)) for s in sessions]
    label = "bulk+close" if close_sessions else "bulk"
    bar = progress(turns, f"ingest {label}", unit="turn") if show_progress else None
    marks = Marks(bar)
    try:
        cpu = CpuMeter(services.db)
        async with scratch_vault(services, "bench-ingest") as vault, cpu("all"):
            marks.start()
            results = await bulk.sessions(vault, inputs, close=close_sessions, progress=marks.step)
            wall_s = time.perf_counter() - marks.t0
    finally:
        if bar is not None:
            bar.close()
    decisions.update(c.decision for r in results for c in r.chunks)
    out = _result(services, label, clock, close_clock, decisions, sessions, turns, wall_s=wall_s,
                  append_s=wall_s - close_s,
                  close_s=close_s if close_sessions else None, requeries=bulk.write.requeries, batch=batch,
                  cpu=cpu)
    out["per_s_by_tenth"] = marks.tenths(turns)
    out["after_last_batch_s"] = round(wall_s - marks.marks[-1][1], 1)
    return out


async def run_bulk_memories(services: Services, texts: list[str], *, batch: int = 256,
                            show_progress: bool = True, mirror: Any = None, screen: str | None = None,
                            read_verdict: str | None = None) -> dict[str, Any]:
    """Short memories through the bulk path into a fresh vault: the rate overall and for each tenth of the run."""
    from datetime import UTC, datetime, timedelta

    from app.bench.cpu import CpuMeter
    from app.bench.runtime import progress, scratch_vault
    from app.write.bulk import BulkIngest
    from app.write.items import WriteItem
    from app.write.timing import StageClock

    start = datetime(2024, 1, 1, tzinfo=UTC)
    items = [WriteItem(content=t, said_at=start + timedelta(minutes=7 * i), source_kind="user" if i % 2 == 0
                       else "assistant", session_id=f"mem-{i // 40}") for i, t in enumerate(texts)]
    clock = StageClock()
    bulk = BulkIngest(services, _bulk_config(batch, mirror, screen, read_verdict), clock=clock)
    instrument(bulk.sessions_track, clock)
    n = len(items)
    bar = progress(n, "ingest memories", unit="mem") if show_progress else None
    marks = Marks(bar)
    try:
        cpu = CpuMeter(services.db)
        async with scratch_vault(services, "bench-ingest-mem") as vault, cpu("all"):
            marks.start()
            results = await bulk.memories(vault, items, progress=marks.step)
            wall_s = time.perf_counter() - marks.t0
    finally:
        if bar is not None:
            bar.close()
    tenths = marks.tenths(n)
    made = {r.block_id: r.index for r in results if r.decision in ("CREATE", "SUPERSEDE")}
    per_item = [[r.decision, made.get(r.related_block_id if r.decision != "CREATE" else None)] for r in results]
    return {"path": "bulk memories", "per_item": per_item, "mirror": _mirror_note(bulk.config.mirror),
            "memories": n, "batch": batch, "wall_s": round(wall_s, 1),
            "memories_per_s": round(n / wall_s, 1) if wall_s else 0.0, "per_s_by_tenth": tenths,
            "after_last_batch_s": round(wall_s - marks.marks[-1][1], 1),
            "write_phase_per_s": round(n / marks.marks[-1][1], 1) if marks.marks[-1][1] else 0.0,
            "screen": "process" if bulk.screen_process is not None else "thread",  # what ran, past the threshold
            "screen_process_rss_mb": round(bulk.screen_process.rss_kb / 1024, 1)
            if bulk.screen_process is not None and bulk.screen_process.rss_kb else None,
            "stage_ms_per_memory": {st: round(clock.seconds[st] * 1000 / n, 3) for st in STAGES
                                    if st in clock.seconds},
            "requeries": bulk.write.requeries, "decisions": dict(Counter(r.decision for r in results)),
            "cpu_ms_per_memory": cpu.per_item_ms("all", n),
            "embedder": services.embedder.name, "llm": services.settings.llm}


def _bulk_config(batch: int, mirror: Any, screen: str | None = None, read_verdict: str | None = None) -> Any:
    from app.write.bulk import BulkConfig
    from app.write.mirror import MirrorConfig

    config = BulkConfig(batch_items=batch, mirror=mirror or MirrorConfig())
    if read_verdict is not None:
        config = replace(config, read_verdict=read_verdict == "write")
    return config if screen is None else replace(config, screen_process=screen == "process")


def _mirror_note(m: Any) -> str:
    return (f"exact below {m.exact_below:,} blocks a layer, HNSW graph above (M {m.m}, ef_construction "
            f"{m.ef_construction}, ef_search {m.ef_search})")


class Marks:
    """(items done, seconds) after each committed batch: the rate of each tenth of a run."""

    def __init__(self, bar: Any = None) -> None:
        self.bar = bar
        self.done = 0
        self.t0 = time.perf_counter()
        self.marks: list[tuple[int, float]] = [(0, 0.0)]

    def start(self) -> None:
        self.t0 = time.perf_counter()

    def step(self, k: int) -> None:
        self.done += k
        self.marks.append((self.done, time.perf_counter() - self.t0))
        if self.bar is not None:
            self.bar.update(k)

    def tenths(self, n: int) -> list[float | None]:
        out: list[float | None] = []
        for q in range(1, 11):
            lo = [m for m in self.marks if m[0] <= n * (q - 1) / 10][-1]
            hi = next((m for m in self.marks if m[0] >= n * q / 10), self.marks[-1])
            out.append(round((hi[0] - lo[0]) / (hi[1] - lo[1]), 1) if hi[1] > lo[1] else None)
        return out


def format_memories(r: dict[str, Any]) -> str:
    from app.bench.runtime import conditions_note

    lines = [f"ingest: {r['memories']} short memories through the bulk path (batches of {r['batch']}), embedder "
             f"{r['embedder']}, llm {r['llm']}, every gate on, one writer process{conditions_note()}",
             f"  vector mirror: {r['mirror']}",
             f"  {r['memories_per_s']:.1f} memories/s ({r['wall_s']:.1f} s, of which {r['after_last_batch_s']:.1f} s "
             f"after the last batch: the vault's HNSW index); by tenth of the run (the vault growing): "
             f"{' / '.join(str(x) for x in r['per_s_by_tenth'])}",
             f"  while writing (to the last batch's commit, without the index build): "
             f"{r['write_phase_per_s']:.1f} memories/s; screened in {_screen_note(r)}",
             f"    {'stage':<28}{'ms/memory':>10}"]
    lines += [f"    {st:<28}{ms:>10.3f}" for st, ms in r["stage_ms_per_memory"].items()]
    lines.append(f"    decisions: {', '.join(f'{k} {v}' for k, v in sorted(r['decisions'].items()))}")
    if r.get("decisions_differing"):
        d = r["decisions_differing"]
        lines.append(f"    against the saved run: {d['decision']} of {d['memories']} memories decided otherwise, "
                     f"{d['target']} more the same way against another memory's block")
    lines.append(_cpu_line(r.get("cpu_ms_per_memory"), "memory", "memories"))
    return "\n".join(lines)


def _screen_note(r: dict[str, Any]) -> str:
    if r["screen"] != "process":
        return "the writer's model threads"
    rss = r.get("screen_process_rss_mb")
    return "a process of its own" + (f" ({rss:.0f} MB resident at the end)" if rss else "")


def _cpu_line(cpu: dict[str, Any] | None, unit: str, units: str) -> str:
    """CPU per item in the writer and in PostgreSQL, and the rate two idle cores could reach at that cost."""
    if not cpu:
        return "    cpu: not measured"
    pg = f", PostgreSQL {cpu['postgres']:.2f}" if cpu.get("postgres") is not None else " (PostgreSQL not readable)"
    child = (f" (its process {cpu['writer'] - cpu['writer_child']:.2f} + the screening process "
             f"{cpu['writer_child']:.2f})") if cpu.get("writer_child") else ""
    return (f"    cpu ms/{unit}: writer {cpu['writer']:.2f}{child}{pg}; at that cost 2 idle cores reach "
            f"{cpu['bound_per_s']:.0f} {units}/s")


def _result(services: Services, path: str, clock: Any, close_clock: Any, decisions: Counter[str], sessions: list[Session], turns: int,
            *, wall_s: float, append_s: float, close_s: float | None, requeries: int, batch: int | None = None,
            cpu: Any = None) -> dict[str, Any]:
    chunks = sum(v for k, v in decisions.items() if not k.startswith("close:"))
    staged = sum(clock.seconds[st] for st in ("normalize", "gates", "embed", "dedup", "persist", "commit"))
    return {
        "path": path,
        "batch_turns": batch,
        "turns": turns,
        "sessions": len(sessions),
        "chunks": chunks,
        "turns_per_s": round(turns / wall_s, 1) if wall_s else 0.0,
        "append_turns_per_s": round(turns / append_s, 1) if append_s else 0.0,
        "close_ms_per_session": round(close_s * 1000 / len(sessions), 2) if close_s is not None and sessions
        else None,
        "wall_s": round(wall_s, 2),
        "stage_ms_per_turn": {st: round(clock.seconds[st] * 1000 / turns, 3) for st in STAGES
                              if st in clock.seconds and turns},
        "unstaged_ms_per_turn": round((append_s - staged) * 1000 / turns, 3) if turns else 0.0,
        "close_stage_ms_per_session": {st: round(close_clock.seconds[st] * 1000 / len(sessions), 2)
                                       for st in STAGES + CLOSE_STAGES if st in close_clock.seconds} if close_s is not None and sessions else None,
        "requeries": requeries,
        # The vault's write lock (app/write/serial.py): ms each transaction held it (until its commit ended) and
        # waited for it, averaged over the appends' and the closes' transactions, and the hold per turn.
        "lock_ms": {name: {"transactions": c.calls["lock.held"],
                           "held_ms_per_txn": round(c.seconds["lock.held"] * 1000 / c.calls["lock.held"], 2),
                           "waited_ms_per_txn": round(c.seconds["lock.wait"] * 1000 / c.calls["lock.held"], 2),
                           "held_ms_per_turn": round(c.seconds["lock.held"] * 1000 / turns, 3) if turns else 0.0}
                    for name, c in (("append", clock), ("close", close_clock)) if c.calls["lock.held"]},
        "cpu_ms_per_turn": ({"appending": cpu.per_item_ms("append", turns),
                             "with_close": _sum_cpu(cpu, ("append", "close"), turns)} if "append" in cpu.use
                            else {"all": cpu.per_item_ms("all", turns)}) if cpu is not None else None,
        "decisions": dict(decisions),
        "embedder": services.embedder.name,
        "llm": services.settings.llm,
    }


def format_table(result: dict[str, Any]) -> str:
    from app.bench.runtime import conditions_note

    runs = list(result.values())
    if not runs:
        return "ingest: nothing run"
    r0 = runs[0]
    lines = [f"ingest: {r0['turns']} turns in {r0['sessions']} sessions, embedder {r0['embedder']}, "
             f"llm {r0['llm']}, every gate on, one writer process{conditions_note()}"]
    for r in runs:
        what = {"api": "api (one append_turns per session, then its close)" if r.get("in_flight", 1) == 1 else
                f"api ({r['in_flight']} sessions in flight: every append_turns, then every close)",
                "bulk": f"bulk (batches of {r['batch_turns']} turns, next batch screened meanwhile)",
                "bulk+close": f"bulk with close (one session per batch, closed after it)"}[r["path"]]
        rate = (f"{r['append_turns_per_s']:.1f} turns/s appending" if r["close_ms_per_session"] is None else
                f"{r['append_turns_per_s']:.1f} turns/s appending, {r['turns_per_s']:.1f} with session close "
                f"(close {r['close_ms_per_session']:.1f} ms/session)")
        lines += [f"  {what}: {rate}; {r['chunks']} chunk items, {r['wall_s']:.1f} s"]
        if r.get("per_s_by_tenth"):
            lines.append("    turns/s by tenth of the run (the vault growing): "
                         + " / ".join(str(x) for x in r["per_s_by_tenth"])
                         + f"; {r['after_last_batch_s']:.1f} s after the last batch (the vault's HNSW index)")
        lines.append(f"    {'stage':<28}{'ms/turn':>9}")
        for st, ms in r["stage_ms_per_turn"].items():
            lines.append(f"    {st:<28}{ms:>9.3f}")
        lines.append(f"    {'(appending wall - stages)':<28}{r['unstaged_ms_per_turn']:>9.3f}")
        if r["close_stage_ms_per_session"]:
            lines.append("    close, ms/session by stage: " + ", ".join(
                f"{st} {ms:.1f}" for st, ms in r["close_stage_ms_per_session"].items() if "." not in st))
        for name, lk in (r.get("lock_ms") or {}).items():
            lines.append(f"    vault write lock ({name}): held {lk['held_ms_per_txn']:.2f} ms a transaction "
                         f"({lk['held_ms_per_turn']:.3f} ms/turn), waited {lk['waited_ms_per_txn']:.2f} ms; "
                         f"{lk['transactions']} transactions")
        lines.append(f"    decisions: {', '.join(f'{k} {v}' for k, v in sorted(r['decisions'].items()))}"
                     + (f"; candidate queries repeated for {r['requeries']} items" if r["requeries"] else ""))
        for what, use in (r.get("cpu_ms_per_turn") or {}).items():
            if use:
                lines.append(_cpu_line(use, "turn", "turns").replace("cpu ms/turn", f"cpu ms/turn ({what})"))
    return "\n".join(lines)


def _sum_cpu(cpu: Any, sections: tuple[str, ...], n: int) -> dict[str, Any] | None:
    from app.bench.cpu import CpuUse

    uses = [cpu.use[s] for s in sections if s in cpu.use]
    if not uses or not n:
        return None
    pg = None if any(u.postgres_s is None for u in uses) else sum(u.postgres_s for u in uses)
    return CpuUse(sum(u.writer_s for u in uses), pg).per_item_ms(n)
