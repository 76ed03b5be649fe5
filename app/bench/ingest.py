"""``memvault bench ingest``: turns per second through the whole write track, and milliseconds per stage.

Real conversational text: the turns of the LoCoMo and LongMemEval files in ``../shared/eval`` (paths can
be given), replayed as sessions at their own dates into a fresh vault, with the default embedder and the
heuristic LLM. Each session is appended (archive, chunking, normalize, NoiseFilter, InjectionGuard +
PoisoningDetector, embed, Dedup, persist) and then closed (atomic units + summary through the same gates).

The stages are timed from outside, by wrapping the write track's own objects on this instance only:
``normalizer.normalize``, the gates (each gate of the chain when the chain exposes them), the embedder,
``_candidates`` (the Dedup candidate query), ``_decide`` (Dedup bands and conflict resolution) and ``apply``
(persist: blocks, sources, audit, graph job). What remains of a session's append is chunking and the turn
archive. Time spent inside a wrapped call that is also inside another (e.g. embedding a merge inside
``prepare``) is counted once, by the innermost stage.
"""

from __future__ import annotations

import argparse
import functools
import inspect
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from app.bench.data import Session
from app.services import Services

STAGES = ("normalize", "noise", "injection_poisoning", "gates", "embed", "dedup_candidates", "dedup_decide",
          "persist", "chunk_archive", "close")


def add_parser(bench_sub: argparse._SubParsersAction) -> None:
    from app.bench.runtime import EVAL_DIR

    p = bench_sub.add_parser("ingest", help="turns/s through the whole write track, and ms per gate/stage")
    p.add_argument("--turns", type=int, default=3000, help="how many turns to write (default 3000)")
    p.add_argument("--locomo", type=Path, default=EVAL_DIR / "locomo_dev.json", help="LoCoMo file for text")
    p.add_argument("--longmemeval", type=Path, default=EVAL_DIR / "longmemeval_s_dev.json.gz",
                   help="LongMemEval file for text")
    p.add_argument("--close-sessions", action=argparse.BooleanOptionalAction, default=True,
                   help="close each session (atomic units + summary); default on")
    p.add_argument("--json", dest="json_path", type=Path, help="write the result keys to this file")
    p.set_defaults(func=handler)


def handler(args: argparse.Namespace) -> int:
    from app.bench.runtime import run_bench, write_json
    from app.settings import get_settings

    sessions = corpus_sessions(args.locomo, args.longmemeval, args.turns)
    settings = get_settings().model_copy(update={"embedder": "use", "llm": "heuristic", "reranker": "none"})

    async def core(services: Services) -> dict:
        return await run_ingest(services, sessions, close_sessions=args.close_sessions)

    result = run_bench(core, settings)
    print(format_table(result))
    write_json(args.json_path, result)
    return 0


def corpus_sessions(locomo: Path | None, longmemeval: Path | None, turns: int) -> list[Session]:
    """Sessions of real chat, alternating between the two sets, until ``turns`` turns (the last one cut)."""
    from app.bench.data import load_locomo, load_longmemeval

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
    while count < turns and iters:
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


class StageTimer:
    """Wall time per stage; nested timed calls are charged to the innermost stage only."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: Counter[str] = Counter()
        self._stack: list[list[float]] = []  # per open call: [child seconds]

    def _enter(self) -> float:
        self._stack.append([0.0])
        return time.perf_counter()

    def _exit(self, stage: str, t0: float) -> None:
        elapsed = time.perf_counter() - t0
        (children,) = self._stack.pop()
        self.seconds[stage] += elapsed - children
        self.calls[stage] += 1
        if self._stack:
            self._stack[-1][0] += elapsed

    def wrap(self, stage: str, fn):
        if inspect.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def timed_async(*a, **kw):
                t0 = self._enter()
                try:
                    return await fn(*a, **kw)
                finally:
                    self._exit(stage, t0)
            return timed_async

        @functools.wraps(fn)
        def timed(*a, **kw):
            t0 = self._enter()
            try:
                return fn(*a, **kw)
            finally:
                self._exit(stage, t0)
        return timed


class _Timed:
    """A proxy whose listed methods are timed."""

    def __init__(self, target: Any, timer: StageTimer, methods: dict[str, str]) -> None:
        self._target = target
        for name, stage in methods.items():
            object.__setattr__(self, name, timer.wrap(stage, getattr(target, name)))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target, name)


GATE_STAGES = {"noise": "noise", "injection": "injection_poisoning", "poisoning": "injection_poisoning"}


def instrument(track: Any, timer: StageTimer) -> None:
    """Time the stages of a SessionTrack's WriteTrack (this instance only)."""
    write = track.write
    write.normalizer = _Timed(write.normalizer, timer, {"normalize": "normalize"})
    gates = write.gates
    # SafetyGates calls each gate object in turn (noise, injection, poisoning): time each; the chain's glue
    # around them is "gates".
    for attr, stage in GATE_STAGES.items():
        gate = getattr(gates, attr, None)
        if gate is not None and callable(gate):
            setattr(gates, attr, timer.wrap(stage, gate))
    gates.check = timer.wrap("gates", gates.check)
    services = write.services
    services.embedder = _Timed(services.embedder, timer, {"embed_documents": "embed"})
    write._candidates = timer.wrap("dedup_candidates", write._candidates)
    write._decide = timer.wrap("dedup_decide", write._decide)
    write.apply = timer.wrap("persist", write.apply)


async def run_ingest(services: Services, sessions: list[Session], *, close_sessions: bool = True,
                     show_progress: bool = True) -> dict[str, Any]:
    from app.bench.runtime import progress, scratch_vault
    from app.write.sessions import SessionTrack, TurnIn

    timer = StageTimer()
    track = SessionTrack(services)
    embedder = services.embedder
    instrument(track, timer)
    decisions: Counter[str] = Counter()
    turns = sum(len(s.turns) for s in sessions)
    append_s = close_s = 0.0
    bar = progress(turns, "ingest", unit="turn") if show_progress else None
    try:
        async with scratch_vault(services, "bench-ingest") as vault:
            for s in sessions:
                t0 = timer._enter()
                turns_in = [TurnIn(t.role, t.content, s.date) for t in s.turns]
                res = await track.append_turns(vault, s.id, turns_in)
                timer._exit("chunk_archive", t0)
                append_s += time.perf_counter() - t0
                decisions.update(r.decision for r in res.chunks)
                if close_sessions:
                    t1 = timer._enter()
                    closed = await track.close(vault, s.id)
                    timer._exit("close", t1)
                    close_s += time.perf_counter() - t1
                    decisions.update(f"close:{r.decision}" for r in closed.units)
                if bar is not None:
                    bar.update(len(s.turns))
    finally:
        services.embedder = embedder
        if bar is not None:
            bar.close()
    chunks = sum(v for k, v in decisions.items() if not k.startswith("close:"))
    total_s = append_s + close_s
    return {
        "turns": turns,
        "sessions": len(sessions),
        "chunks": chunks,
        "turns_per_s": round(turns / total_s, 1) if total_s else 0.0,
        "append_turns_per_s": round(turns / append_s, 1) if append_s else 0.0,
        "close_ms_per_session": round(close_s * 1000 / len(sessions), 2)
        if close_sessions and sessions else 0.0,
        "stage_ms_per_turn": {st: round(timer.seconds[st] * 1000 / turns, 3) for st in STAGES
                              if st in timer.seconds and turns},
        "stage_calls": dict(timer.calls),
        "decisions": dict(decisions),
        "embedder": embedder.name,
        "llm": services.settings.llm,
    }


def format_table(result: dict[str, Any]) -> str:
    r = result
    lines = [f"ingest: {r['turns']} turns in {r['sessions']} sessions ({r['chunks']} chunk items), "
             f"embedder {r['embedder']}, llm {r['llm']}",
             f"  {r['turns_per_s']:.1f} turns/s with session close, {r['append_turns_per_s']:.1f} turns/s "
             f"appending; close {r['close_ms_per_session']:.1f} ms/session",
             f"  {'stage':<22}{'ms/turn':>10}"]
    for st, ms in result["stage_ms_per_turn"].items():
        lines.append(f"  {st:<22}{ms:>10.3f}")
    lines.append(f"  decisions: {', '.join(f'{k} {v}' for k, v in sorted(result['decisions'].items()))}")
    return "\n".join(lines)
