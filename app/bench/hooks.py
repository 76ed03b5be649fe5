"""``memvault bench hooks``: what an agent waits for on each prompt and at start. ``memvault hook
user-prompt-submit`` run N times against a running service, each a new process as Claude Code runs it (its recall
answer, its turn recorded), and ``memvault mcp`` started N times until it answers ``initialize``. Prints p50 / p95
/ min of wall time and the CPU the hook's process used (a shared machine's wall time includes the wait for a core).

The hook's time is split in two, each measured on its own: the process alone (``startup``: the same command with
an event that has no prompt, so Python starts, imports, parses and exits without a request), and the service's
part alone (``http``: the hook's own code, ``app.interfaces.hook_client.over_http``, run N times in this process:
the recall and the turn written, over one connection each, as a hook process does).

    memvault serve &  # with MEMVAULT_API_KEY set to a key with scope write
    memvault bench hooks --vault bench-hooks -n 30
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import uuid


def add_parser(bench_sub: argparse._SubParsersAction) -> None:
    p = bench_sub.add_parser("hooks", help="hook (user-prompt-submit) and MCP stdio start latency against a "
                                           "running service")
    p.add_argument("--vault", default="bench-hooks", help="vault the hooks write to (created when missing)")
    p.add_argument("-n", type=int, default=30, help="runs of each (default 30)")
    p.add_argument("--url", default=None, help="the running service (default MEMVAULT_API_URL / the hook's)")
    p.add_argument("--json", action="store_true", help="print the numbers as JSON")
    p.set_defaults(func=handler)


def _quantiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"min": ordered[0], "p50": ordered[len(ordered) // 2],
            "p95": ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], "max": ordered[-1]}


def _ms(values: list[float]) -> dict[str, int]:
    return {k: round(v * 1000) for k, v in _quantiles(values).items()}


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _prompt(i: int) -> str:
    return f"Which port does the staging database use? ({i})"


def _hook_runs(args: argparse.Namespace, n: int, *, prompt: bool = True) -> tuple[list[float], list[float]]:
    """``prompt`` False: the event carries none, so the hook process starts, reads it and exits, sending nothing."""
    command = [sys.executable, "-m", "app.cli", "hook", "user-prompt-submit", "--vault", args.vault]
    if args.url:
        command += ["--url", args.url]
    session = f"bench-{uuid.uuid4().hex[:8]}"
    walls, cpus = [], []
    for i in range(n):
        event = {"session_id": session, "prompt": _prompt(i)} if prompt else {"session_id": session}
        payload = json.dumps(event)
        cpu, started = _child_cpu(), time.perf_counter()
        r = subprocess.run(command, input=payload, capture_output=True, text=True, env=dict(os.environ))
        walls.append(time.perf_counter() - started)
        cpus.append(_child_cpu() - cpu)
        if r.returncode != 0:
            raise SystemExit(f"memvault bench hooks: the hook failed: {r.stderr.strip()}")
        if not prompt and r.stdout:
            raise SystemExit(f"memvault bench hooks: a hook without a prompt answered {r.stdout[:200]!r}")
    return walls, cpus


def _http_runs(args: argparse.Namespace, n: int) -> list[float]:
    """The hook's requests alone: its own code (recall, then the turn written) in this process, no process start."""
    from app.interfaces.hook_client import agent_settings, over_http, service_url
    from app.interfaces.hooks import HookInput

    settings = agent_settings()
    url, key = service_url(args.url, settings), settings["api_key"] or ""
    session = f"bench-{uuid.uuid4().hex[:8]}"
    took = []
    for i in range(n):
        started = time.perf_counter()
        over_http(url, key, args.vault, "user-prompt-submit", HookInput(session, _prompt(i), None, None), 1000)
        took.append(time.perf_counter() - started)
    return took


def _mcp_starts(n: int) -> list[float]:
    """Seconds until ``memvault mcp`` answers ``initialize`` (one JSON-RPC line on stdin, its answer on stdout)."""
    init = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
    took = []
    for _ in range(n):
        started = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "app.cli", "mcp"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=dict(os.environ))
        assert proc.stdin and proc.stdout
        proc.stdin.write(init + "\n")
        proc.stdin.flush()
        answer = proc.stdout.readline()
        took.append(time.perf_counter() - started)
        proc.stdin.close()
        proc.wait(60)
        if '"result"' not in answer:
            raise SystemExit(f"memvault bench hooks: memvault mcp did not answer initialize: {answer!r}")
    return took


def handler(args: argparse.Namespace) -> int:
    if args.n < 1:
        raise SystemExit("memvault bench hooks: -n must be at least 1")
    _hook_runs(args, 1)  # warm: the vault made, the service's caches filled
    walls, cpus = _hook_runs(args, args.n)
    startup, startup_cpus = _hook_runs(args, args.n, prompt=False)
    http = _http_runs(args, args.n)
    starts = _mcp_starts(args.n)
    out = {"n": args.n, "hook_wall_ms": _ms(walls), "hook_cpu_ms": _ms(cpus), "hook_startup_ms": _ms(startup),
           "hook_startup_cpu_ms": _ms(startup_cpus), "hook_http_ms": _ms(http), "mcp_initialize_ms": _ms(starts),
           "load_average": round(os.getloadavg()[0], 2)}
    if args.json:
        print(json.dumps(out))
        return 0
    w, s, h = out["hook_wall_ms"], out["hook_startup_ms"], out["hook_http_ms"]
    print(f"hook user-prompt-submit, {args.n} runs: wall p50 {w['p50']} ms, p95 {w['p95']} ms, min {w['min']} ms "
          f"(goal p95 300); CPU of the hook's process p50 {out['hook_cpu_ms']['p50']} ms")
    print(f"  of which the process alone (start, imports, exit; no request): p50 {s['p50']} ms, p95 {s['p95']} ms, "
          f"min {s['min']} ms; the requests alone (recall + turn, in this process): p50 {h['p50']} ms, p95 "
          f"{h['p95']} ms, min {h['min']} ms")
    print(f"memvault mcp until initialize is answered: p50 {out['mcp_initialize_ms']['p50']} ms, p95 "
          f"{out['mcp_initialize_ms']['p95']} ms (goal 2000); load average {out['load_average']}")
    return 0
