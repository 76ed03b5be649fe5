"""``memvault bench load``: the service under an open-loop arrival rate, as its users load it.

It starts ``memvault serve`` (the API and its job worker) on the benchmark database and a free loopback port,
fills a vault to ``--memories``, waits for the fill's jobs, then measures recall one at a time (the idle p95).
Then, open loop (app/bench/openloop.py: Poisson arrivals, each request sent at its scheduled time whatever the
earlier ones did, latency from the scheduled time), ``--write-share`` writes and recalls otherwise:

- ``--rate R``: one phase at R requests/s for ``--duration`` seconds;
- otherwise (``--find-saturation``, the default): steps from ``--start-rate`` up by ``--step-factor``, each
  ``--step-duration`` seconds, until the completed rate stops following the offered one (below 90%), recall's p95
  passes ``--explode`` x the idle p95, or errors pass 1%; the saturation throughput is the most any step
  completed per second; then a phase at 50% and one at 80% of it.

Each phase reports p50/p95/p99 for recall and writes apart, errors by status, CPU per request of the service and
of PostgreSQL, the server's resident memory over time, and at the end the acknowledged writes against those in
the database. Goal (issue 30): at 50% of saturation recall p95 at most 1.5x the idle p95, 0 errors, 0 lost writes.
The section of docs/benchmarks.md between ``<!-- keep:load -->`` markers is rewritten unless ``--no-doc``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import shlex
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

from app.bench import load_live as live
from app.bench.openloop import Step, pct, run_step, saturated, saturation_rps

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "benchmarks.md"
SECTION_BEGIN, SECTION_END = "<!-- keep:load -->", "<!-- /keep:load -->"
GOAL_RATIO = 1.5  # recall p95 at 50% of saturation / idle recall p95


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("load", help="open-loop recall + write load on loopback: saturation, latency at 50%% and 80%% "
                                    "of it, errors, lost writes, CPU per request, RSS",
                       description=__doc__.split("\n\n", 1)[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    how = p.add_mutually_exclusive_group()
    how.add_argument("--rate", type=float, default=None, metavar="R",
                     help="one phase at R requests/s (open loop) instead of the saturation search")
    how.add_argument("--find-saturation", action="store_true",
                     help="step the rate up to saturation, then run at 50%% and 80%% of it (the default)")
    p.add_argument("--duration", type=float, default=30.0, help="seconds of each measured phase (default 30)")
    p.add_argument("--step-duration", type=float, default=20.0, help="seconds of each search step (default 20)")
    p.add_argument("--start-rate", type=float, default=4.0, help="the search's first rate, requests/s (default 4)")
    p.add_argument("--step-factor", type=float, default=1.5, help="each search step's rate over the last (1.5)")
    p.add_argument("--max-steps", type=int, default=10, help="search steps at most (default 10)")
    p.add_argument("--explode", type=float, default=10.0,
                   help="a step whose recall p95 passes this many times the idle p95 is past saturation (10)")
    p.add_argument("--fixed", action="store_true", help="evenly spaced arrivals instead of Poisson")
    p.add_argument("--write-share", type=float, default=0.2, help="share of requests that write (default 0.2)")
    p.add_argument("--memories", type=int, default=2000, help="memories in the vault before the load (default 2000)")
    p.add_argument("--idle-recalls", type=int, default=100, help="recalls one at a time first (the idle p95)")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="the server's API processes (`memvault serve --workers`; default: serve's own, "
                        "MEMVAULT_API_WORKERS)")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--json", default=None, metavar="FILE", help="write the whole result as JSON to FILE")
    p.add_argument("--no-doc", action="store_true", help="do not write the section of docs/benchmarks.md")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    for name in ("duration", "step_duration", "start_rate"):
        if getattr(args, name) <= 0:
            raise SystemExit(f"bench load: --{name.replace('_', '-')} must be positive")
    if args.rate is not None and args.rate <= 0:
        raise SystemExit("bench load: --rate must be positive")
    if args.step_factor <= 1 or not 0 <= args.write_share <= 1:
        raise SystemExit("bench load: --step-factor must be above 1 and --write-share within 0..1")
    return asyncio.run(run(args))


class Phase:
    """One open-loop step with the readings around it: CPU (service, PostgreSQL, generator), the job backlog."""

    def __init__(self, name: str, step: Step, cpu: dict, drained_s: float, queue_after: int) -> None:
        self.name, self.step, self.cpu, self.drained_s, self.queue_after = name, step, cpu, drained_s, queue_after

    def summary(self) -> dict:
        n = self.step.completed or 1
        c = self.cpu
        return {"phase": self.name, **self.step.summary(), "jobs_drained_before_s": round(self.drained_s, 1),
                "queue_after": self.queue_after,
                "cpu": {**c, "service_ms_per_request": round(1000 * c["service_s"] / n, 2),
                        "postgres_ms_per_request": round(1000 * c["postgres_s"] / n, 2),
                        "client_ms_per_request": round(1000 * c["client_s"] / n, 2)}}


async def run(args: argparse.Namespace) -> int:
    import httpx

    from app.bench.runtime import ensure_bench_database, serve_process, write_json
    from app.settings import get_settings

    import logging

    logging.getLogger("httpx").setLevel(logging.WARNING)  # a line per request would drown the progress lines
    settings = get_settings()
    load_before = os.getloadavg()[0]
    at_commit = commit()  # as the run starts (the checkout may change while it runs)
    url = await asyncio.to_thread(ensure_bench_database, settings)
    env = {**os.environ, "MEMVAULT_DATABASE_URL": url,
           "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    log_path = Path(os.environ.get("TMPDIR", "/tmp")) / f"memvault-bench-load-{os.getpid()}.log"
    workers = ["--workers", str(args.workers)] if args.workers else []
    rng = random.Random(args.seed)
    vault = f"load-{uuid.uuid4().hex[:10]}"
    key, key_id = await live.admin_key(url)
    steps: list[Phase] = []
    phases: list[Phase] = []
    rss: list[tuple[float, str, float]] = []
    reached = None  # why the search's last step counts as saturated
    try:
        with serve_process(env, log_path, *workers) as (server, base):
            async with httpx.AsyncClient(base_url=base, timeout=60, headers={"Authorization": f"Bearer {key}"},
                                         limits=httpx.Limits(max_connections=256, max_keepalive_connections=256)
                                         ) as http:
                await live.wait_up(http, server, log_path)
                (await http.post("/v1/vaults", json={"name": vault})).raise_for_status()
                say(f"API on {base} (pid {server.pid}), database {url.rsplit('/', 1)[-1]}, vault {vault}")
                t0 = time.monotonic()
                for i in range(0, args.memories, 100):
                    batch = [{"content": live.sentence(rng)} for _ in range(min(100, args.memories - i))]
                    (await http.post(f"/v1/vaults/{vault}/memories", json={"items": batch})).raise_for_status()
                fill_s = time.monotonic() - t0
                drained = await live.drain_jobs(url, limit_s=180)
                ops = live.http_ops(http, vault)
                meter = live.CpuMeter(server.pid, url)
                await meter.mark()
                idle: list[float] = []
                for _ in range(args.idle_recalls):
                    t = time.perf_counter()
                    if (await ops.recall(rng)).ok:
                        idle.append(time.perf_counter() - t)
                idle_cpu = await meter.since()
                idle_p95 = pct(idle)["p95"]
                say(f"{args.memories} memories in {fill_s:.0f} s, their jobs done {drained:.0f} s later; "
                    f"idle recall p95 {idle_p95:.0f} ms")
                label = ["idle"]
                started = time.monotonic()

                async def sampler() -> None:
                    while True:
                        rss.append((round(time.monotonic() - started, 1), label[0],
                                    round(sum(live.rss_mb(p) for p in live.process_tree(server.pid)), 1)))
                        await asyncio.sleep(2.0)

                async def phase(name: str, rate: float, duration: float, seed: int, drain_s: float) -> Phase:
                    drained_s = await live.drain_jobs(url, limit_s=drain_s)
                    label[0] = name
                    await meter.mark()
                    step = await run_step(ops, rate, duration, write_share=args.write_share, seed=seed,
                                          poisson=not args.fixed)
                    cpu = await meter.since()
                    result = Phase(name, step, cpu, drained_s, await live.queue_depth(url))
                    s = result.summary()
                    say(f"{name}: offered {s['offered_rps']}/s, completed {s['completed_rps']}/s, recall p95 "
                        f"{s['per_op']['recall']['p95']} ms, write p95 {s['per_op']['write']['p95']} ms, "
                        f"errors {s['errors']}, jobs queued after {result.queue_after}")
                    return result

                sampling = asyncio.create_task(sampler())
                try:
                    if args.rate is not None:
                        phases.append(await phase(f"{args.rate:g}/s", args.rate, args.duration, args.seed, 60))
                    else:
                        reached = f"not reached in {args.max_steps} steps: the throughput is a lower bound"
                        rate = args.start_rate
                        for n in range(args.max_steps):
                            steps.append(await phase(f"step {rate:.1f}/s", rate, args.step_duration,
                                                     args.seed + n, 30))
                            if why := saturated(steps[-1].step, idle_p95, explode=args.explode):
                                say(f"saturated at step {n + 1}: {why}")
                                reached = why
                                break
                            rate *= args.step_factor
                        sat = saturation_rps([p.step for p in steps])
                        for share in (0.5, 0.8):
                            phases.append(await phase(f"{share:.0%} of saturation", share * sat, args.duration,
                                                      args.seed + 100 + int(share * 10), 60))
                finally:
                    sampling.cancel()
                    await asyncio.gather(sampling, return_exceptions=True)
        acked = {k: v for p in [*steps, *phases] for k, v in p.step.acked.items()}
        present = await live.writes_present(url, vault, acked)
    finally:
        await live.drop(url, vault, key_id)

    result = summary(args, idle, idle_cpu, steps, phases, acked, present, rss, fill_s, drained, load_before)
    result["saturation_reason"] = reached
    result["commit"] = at_commit
    print(table(result))
    write_json(args.json, result)
    if not args.no_doc:
        write_doc(result)
    return 0


def say(text: str) -> None:
    print(f"bench load: {text}", file=sys.stderr, flush=True)


def command_line() -> str:
    db = os.environ.get("MEMVAULT_BENCH_DB")
    argv = sys.argv[1:] if sys.argv and sys.argv[0].endswith("memvault") else ["bench", "load"]
    return (f"MEMVAULT_BENCH_DB={db} " if db else "") + "memvault " + shlex.join(argv)


def commit() -> str:
    try:
        return subprocess.run(["git", "-C", str(REPO), "describe", "--always", "--dirty"], capture_output=True,
                              text=True, timeout=10).stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def summary(args, idle: list[float], idle_cpu: dict, steps: list[Phase], phases: list[Phase],
            acked: dict, present: int, rss: list, fill_s: float, drained: float, load_before: float) -> dict:
    idle_pct = pct(idle)
    n_idle = idle_pct["n"] or 1
    half = next((p.summary() for p in phases if p.name.startswith("50%")), None)
    ratio = (half["per_op"]["recall"]["p95"] / idle_pct["p95"]) if half and idle_pct["n"] else None
    errors = sum(p.step.error_count() for p in phases)
    return {
        "when": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), "commit": commit(), "command": command_line(),
        "cores": os.cpu_count(), "loadavg_before": round(load_before, 1), "mode": "rate" if args.rate else "search",
        "write_share": args.write_share, "memories": args.memories, "workers": args.workers,
        "arrivals": "fixed" if args.fixed else "poisson", "explode": args.explode, "fill_s": round(fill_s, 1),
        "jobs_drained_s": round(drained, 1),
        "idle_recall": {**idle_pct, "cpu": idle_cpu,
                        "service_ms_per_request": round(1000 * idle_cpu["service_s"] / n_idle, 2),
                        "postgres_ms_per_request": round(1000 * idle_cpu["postgres_s"] / n_idle, 2)},
        "steps": [p.summary() for p in steps],
        "saturation_rps": round(saturation_rps([p.step for p in steps]), 1) if steps else None,
        "phases": [p.summary() for p in phases],
        "writes_acknowledged": len(acked), "writes_present": present, "writes_lost": len(acked) - present,
        "goal": {"recall_p95_over_idle_at_50": round(ratio, 2) if ratio is not None else None,
                 "ratio_met": ratio is not None and ratio <= GOAL_RATIO, "errors": errors,
                 "lost": len(acked) - present,
                 "met": ratio is not None and ratio <= GOAL_RATIO and errors == 0 and len(acked) == present},
        "rss_mb": rss,
    }


def _rss_by_phase(r: dict) -> list[tuple[str, float, float, float]]:
    """(phase, first, most, last) server RSS in MB for each phase of the run, in order."""
    out: dict[str, list[float]] = {}
    for _, name, mb in r["rss_mb"]:
        out.setdefault(name, []).append(mb)
    return [(name, v[0], max(v), v[-1]) for name, v in out.items()]


def _row(p: dict) -> list[str]:
    c = p["cpu"]
    rec, wr = p["per_op"]["recall"], p["per_op"]["write"]
    errs = {f"{op} {k}": v for op in ("recall", "write") for k, v in p["per_op"][op]["errors"].items()}
    return [p["phase"], f"{p['offered_rps']:.1f}", f"{p['completed_rps']:.1f}",
            f"{rec['p50']:.0f} / {rec['p95']:.0f} / {rec['p99']:.0f}", f"{wr['p50']:.0f} / {wr['p95']:.0f} / "
            f"{wr['p99']:.0f}", str(p["errors"]) + (f" {errs}" if errs else ""),
            f"{c['service_ms_per_request']:.1f} + {c['postgres_ms_per_request']:.1f} "
            f"({c['client_ms_per_request']:.1f})", f"{p['send_lag_ms']['p95']:.0f}", f"{c['machine_busy']:.0%}"]


HEADER = ["phase", "offered/s", "completed/s", "recall p50/p95/p99 ms", "write p50/p95/p99 ms", "errors",
          "CPU ms/request: service + PostgreSQL (load generator)", "send lag p95 ms", "machine busy"]


def table(r: dict) -> str:
    rows = [_row(p) for p in [*r["steps"], *r["phases"]]]
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h) for i, h in enumerate(HEADER)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    i = r["idle_recall"]
    g = r["goal"]
    lines = [f"memvault bench load ({r['arrivals']} arrivals, open loop), {r['write_share']:.0%} writes, vault of "
             f"{r['memories']} memories, {r['when']}, commit {r['commit']}",
             f"idle recall (one at a time): n {i['n']}, p50 {i['p50']:.0f} ms, p95 {i['p95']:.0f} ms, p99 "
             f"{i['p99']:.0f} ms; CPU {i['service_ms_per_request']} + {i['postgres_ms_per_request']} ms a recall",
             fmt.format(*HEADER), *(fmt.format(*row) for row in rows)]
    if r["saturation_rps"] is not None:
        lines.append(f"saturation throughput {r['saturation_rps']} requests/s ({r['saturation_reason']})")
    lines.append(f"writes acknowledged {r['writes_acknowledged']}, in the database {r['writes_present']}, lost "
                 f"{r['writes_lost']}")
    lines.append("server RSS MB (phase: first / most / last): " + "; ".join(
        f"{n}: {a:.0f} / {m:.0f} / {z:.0f}" for n, a, m, z in _rss_by_phase(r)))
    if g["recall_p95_over_idle_at_50"] is not None:
        lines.append(f"goal: at 50% of saturation recall p95 {g['recall_p95_over_idle_at_50']}x idle (at most "
                     f"{GOAL_RATIO}x: {'met' if g['ratio_met'] else 'not met'}); errors {g['errors']}, lost writes "
                     f"{g['lost']}: {'met' if g['met'] else 'not met'}")
    return "\n".join(lines)


def write_doc(r: dict) -> None:
    g = r["goal"]
    rows = [_row(p) for p in [*r["steps"], *r["phases"]]]
    i = r["idle_recall"]
    body = "\n".join([
        SECTION_BEGIN,
        "## Load (`memvault bench load`, open loop)",
        "",
        f"`{r['command']}` at commit `{r['commit']}`, {r['when']}, on {os.cpu_count()} cores, load average "
        f"{r['loadavg_before']} as the run began"
        + (" (other work beside it: the timings are pessimistic and noisy)." if float(r["loadavg_before"]) >= 1.0
           else " (nothing else running)."),
        "",
        f"`memvault serve` (the API{f' in {w} processes' if (w := r.get('workers')) else ''} and its job worker) "
        f"on loopback, a vault of {r['memories']} memories (filled in {r['fill_s']:.0f} s, its jobs done "
        f"{r['jobs_drained_s']:.0f} s later). Open loop: {r['arrivals']} arrivals, each request sent at its "
        f"scheduled time whether or not the earlier ones returned, latency counted from the scheduled time "
        f"(coordinated omission not hidden); {r['write_share']:.0%} writes (a memory each, with an Idempotency-Key), "
        "recalls otherwise. The search steps the rate up until the completed rate falls below 90% of the offered "
        f"one, recall's p95 passes {r['explode']:g}x the idle p95 or errors pass 1%; the saturation throughput is "
        "the most any step completed per second. CPU per request is CPU seconds over the phase / requests "
        "answered, read from "        "/proc: the server's process tree (service) and the backends connected to the benchmark database "
        "(PostgreSQL; its background processes not counted). Send lag: how late the load generator, which shares "
        "the cores, sent a request after its scheduled time (already inside the latencies).",
        "",
        "The idle recall is measured in the same run on the same machine, so the goal's ratio compares like with "
        "like; on a busy machine both sides are inflated and the absolute numbers are not a quiet machine's.",
        "",
        f"Idle recall (one at a time, n {i['n']}): p50 {i['p50']:.0f} ms, p95 {i['p95']:.0f} ms, p99 "
        f"{i['p99']:.0f} ms; CPU {i['service_ms_per_request']} ms service + {i['postgres_ms_per_request']} ms "
        "PostgreSQL a recall.",
        "",
        "| " + " | ".join(HEADER) + " |",
        "|" + "---|" * len(HEADER),
        *("| " + " | ".join(row) + " |" for row in rows),
        "",
        (f"Saturation throughput **{r['saturation_rps']} requests/s** (the last step: {r['saturation_reason']}). "
         if r["saturation_rps"] is not None else "")
        + f"Writes acknowledged {r['writes_acknowledged']}, in the database afterwards {r['writes_present']}, "
        f"lost {r['writes_lost']}. Server RSS in MB (phase: first / most / last): "
        + "; ".join(f"{n} {a:.0f} / {m:.0f} / {z:.0f}" for n, a, m, z in _rss_by_phase(r)) + ".",
        "",
        (f"Goal (issue 30): at 50% of saturation, recall p95 at most {GOAL_RATIO}x the idle p95: "
         f"{g['recall_p95_over_idle_at_50']}x, **{'met' if g['ratio_met'] else 'not met'}**; 0 errors and 0 lost "
         f"writes in the measured phases: {g['errors']} errors, {g['lost']} lost "
         f"(**{'met' if g['errors'] == 0 and g['lost'] == 0 else 'not met'}**)."
         if g["recall_p95_over_idle_at_50"] is not None else
         "A single-rate run (`--rate`): the goal is judged by the saturation search, the default."),
        SECTION_END,
    ])
    text = DOC.read_text(encoding="utf-8") if DOC.exists() else ""
    if SECTION_BEGIN in text:
        text = re.sub(re.escape(SECTION_BEGIN) + ".*?" + re.escape(SECTION_END), lambda _: body, text, flags=re.S)
    else:
        text = text.rstrip("\n") + "\n\n" + body + "\n"
    DOC.write_text(text.rstrip("\n") + "\n", encoding="utf-8")
    say(f"wrote the load section of {DOC}")
