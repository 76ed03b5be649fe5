"""``memvault bench load``: the service under load, as its users meet it, on loopback.

It starts the API and a worker (``memvault serve``, one process) on the benchmark database and a free port,
fills a vault, measures recall alone (one client: the idle p95), then runs ``--clients`` concurrent clients for
``--duration`` seconds, each sending ``--write-share`` writes (a new memory, with an Idempotency-Key) and
recalls otherwise. It reports p50/p95/p99 per operation, the error rate, acknowledged writes against the rows
present afterwards, and the server's resident memory over time, and writes them into docs/benchmarks.md (a
section of its own, kept by ``bench report``). Goal (issue 18): zero errors, zero lost writes, recall p95 under
load within 3x the idle p95.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "benchmarks.md"
SECTION_BEGIN, SECTION_END = "<!-- keep:load -->", "<!-- /keep:load -->"

PEOPLE = ["Anna", "Bruno", "Chen", "Dalia", "Emeka", "Freya", "Goran", "Hana", "Ivo", "Jun", "Kemal", "Lotte",
          "Mateo", "Nour", "Oskar", "Priya", "Quinn", "Rosa", "Sven", "Tariq"]
PLACES = ["Lisbon", "Tainan", "Oslo", "Quito", "Nairobi", "Porto", "Kyoto", "Tallinn", "Accra", "Hanoi", "Bergen",
          "Cusco", "Dakar", "Gdansk", "Hobart", "Izmir"]
THINGS = ["a red kayak", "a sourdough starter", "a vintage camera", "a bonsai tree", "a chess clock", "a telescope",
          "an espresso machine", "a road bike", "a violin", "a sewing machine", "a tent", "a record player"]
VERBS = ["bought", "sold", "borrowed", "repaired", "lost", "found", "gave away", "painted"]
QUESTIONS = ["Where does {p} live?", "What did {p} buy recently?", "Who has {t}?", "What happened in {c}?",
             "What does {p} do on weekends?", "Who travelled to {c}?", "What did {p} repair?"]


def sentence(rng: random.Random) -> str:
    p, c, t, v = rng.choice(PEOPLE), rng.choice(PLACES), rng.choice(THINGS), rng.choice(VERBS)
    n = rng.randrange(2, 999)
    return rng.choice([f"{p} {v} {t} in {c} for {n} euros.", f"{p} moved to {c} and {v} {t} there.",
                       f"In {c}, {p} {v} {t}; it took {n} minutes.", f"{p} says {t} from {c} cost {n} euros."])


def question(rng: random.Random) -> str:
    return rng.choice(QUESTIONS).format(p=rng.choice(PEOPLE), t=rng.choice(THINGS), c=rng.choice(PLACES))


@dataclass
class Tally:
    latencies: dict[str, list[float]] = field(default_factory=lambda: {"recall": [], "write": []})
    errors: dict[str, int] = field(default_factory=lambda: {"recall": 0, "write": 0})
    error_kinds: dict[str, int] = field(default_factory=dict)
    acked: dict[str, int] = field(default_factory=dict)  # Idempotency-Key -> block id

    def error(self, op: str, kind: str) -> None:
        self.errors[op] += 1
        self.error_kinds[kind] = self.error_kinds.get(kind, 0) + 1


def pct(xs: list[float]) -> dict[str, float]:
    if not xs:
        return {"n": 0, "p50": float("nan"), "p95": float("nan"), "p99": float("nan")}
    a = np.asarray(xs) * 1000
    return {"n": len(xs), "p50": float(np.percentile(a, 50)), "p95": float(np.percentile(a, 95)),
            "p99": float(np.percentile(a, 99))}


def rss_mb(pid: int) -> float:
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return float("nan")
    m = re.search(r"VmRSS:\s+(\d+) kB", text)
    return int(m.group(1)) / 1024 if m else float("nan")


def cpu_s(pids: list[int]) -> float:
    """CPU seconds (user + system) the processes ``pids`` have used so far (a gone one counts 0)."""
    from app.bench.cpu import proc_cpu

    return sum(proc_cpu(pid) or 0.0 for pid in pids)


def process_tree(root: int) -> list[int]:
    """``root`` and its descendants (the API processes and the job worker of `memvault serve`)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            pid, ppid = stat.read_text().rsplit(")", 1)[1].split()[1:2], int(stat.parent.name)
            children.setdefault(int(pid[0]), []).append(ppid)
        except (OSError, ValueError, IndexError):
            continue
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, []))
    return out


def machine_busy() -> tuple[float, float]:
    """(busy, total) jiffies of the whole machine so far (/proc/stat), for the share of the CPU in use."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + (values[4] if len(values) > 4 else 0)
    return float(sum(values) - idle), float(sum(values))


@dataclass
class CpuMeter:
    """CPU used between :meth:`mark` and :meth:`since` by the server (its process tree: API processes and job
    worker), the database (the backends serving the benchmark database: a backend that started meanwhile counts
    whole, one that ended meanwhile is missed) and this client, with the machine's busy share (other work too)."""

    server: int
    url: str
    start: dict = field(default_factory=dict)

    async def _backends(self) -> list[int]:
        import psycopg

        async with await psycopg.AsyncConnection.connect(self.url, autocommit=True) as conn:
            cur = await conn.execute("SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
                                     "AND pid <> pg_backend_pid()")
            return [r[0] for r in await cur.fetchall()]

    async def read(self) -> dict:
        return {"server": cpu_s(process_tree(self.server)),
                "db": {pid: cpu_s([pid]) for pid in await self._backends()},
                "client": time.process_time(), "machine": machine_busy(), "at": time.monotonic()}

    async def mark(self) -> None:
        self.start = await self.read()

    async def since(self) -> dict:
        end = await self.read()
        db = sum(v - self.start["db"].get(pid, 0.0) for pid, v in end["db"].items())
        busy = (end["machine"][0] - self.start["machine"][0]) / max(1.0, end["machine"][1] - self.start["machine"][1])
        return {"server_s": round(end["server"] - self.start["server"], 2), "db_s": round(db, 2),
                "client_s": round(end["client"] - self.start["client"], 2),
                "wall_s": round(end["at"] - self.start["at"], 2), "machine_busy": round(busy, 3)}


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("load", help="concurrent recall + write load on loopback: latency, errors, lost writes, RSS")
    p.add_argument("--duration", type=float, default=300.0, help="seconds under load (default 300)")
    p.add_argument("--clients", type=int, default=32)
    p.add_argument("--write-share", type=float, default=0.2, help="share of requests that write (default 0.2)")
    p.add_argument("--memories", type=int, default=2000, help="memories in the vault before the load (default 2000)")
    p.add_argument("--idle-recalls", type=int, default=100, help="recalls by one client first (the idle p95)")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="the server's API processes (`memvault serve --workers`; default: serve's own, "
                   "MEMVAULT_API_WORKERS)")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--json", default=None, metavar="FILE")
    p.add_argument("--no-doc", action="store_true", help="do not write the section of docs/benchmarks.md")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    return asyncio.run(run(args))


async def run(args: argparse.Namespace) -> int:
    import httpx

    from app.bench.runtime import ensure_bench_database, serve_process, write_json
    from app.settings import get_settings

    settings = get_settings()
    load_before = os.getloadavg()[0]  # other work on the machine as the run begins
    url = await asyncio.to_thread(ensure_bench_database, settings)
    env = {k: v for k, v in os.environ.items()}
    env.update(MEMVAULT_DATABASE_URL=url, PYTHONPATH=str(REPO) + os.pathsep + env.get("PYTHONPATH", ""))
    log_path = Path(os.environ.get("TMPDIR", "/tmp")) / f"memvault-bench-load-{os.getpid()}.log"
    workers = ["--workers", str(args.workers)] if args.workers else []
    rng = random.Random(args.seed)
    vault = f"load-{uuid.uuid4().hex[:10]}"
    key, key_id = await _admin_key(url)
    try:
        with serve_process(env, log_path, *workers) as (server, base):
            async with httpx.AsyncClient(base_url=base, timeout=60, headers={"Authorization": f"Bearer {key}"},
                                         limits=httpx.Limits(max_connections=args.clients + 4)) as http:
                await _wait_up(http, server, log_path)
                r = await http.post("/v1/vaults", json={"name": vault})
                r.raise_for_status()
                print(f"bench load: API on {base} (pid {server.pid}), database {url.rsplit('/', 1)[-1]}, "
                      f"vault {vault}", file=sys.stderr)
                t0 = time.monotonic()
                for i in range(0, args.memories, 100):
                    batch = [{"content": sentence(rng)} for _ in range(min(100, args.memories - i))]
                    (await http.post(f"/v1/vaults/{vault}/memories", json={"items": batch})).raise_for_status()
                fill_s = time.monotonic() - t0
                drained = await _drain_jobs(url, limit_s=180)
                meter = CpuMeter(server.pid, url)
                await meter.mark()
                idle = Tally()
                for _ in range(args.idle_recalls):
                    await _recall(http, vault, rng, idle)
                print(f"bench load: {args.memories} memories in {fill_s:.0f} s, their jobs done {drained:.0f} s "
                      f"later; idle recall p95 {pct(idle.latencies['recall'])['p95']:.0f} ms; {args.clients} clients "
                      f"for {args.duration:.0f} s", file=sys.stderr)
                idle_cpu = await meter.since()
                await meter.mark()
                load, rss = Tally(), [(0.0, rss_mb(server.pid))]
                stop = time.monotonic() + args.duration
                start = time.monotonic()

                async def client(n: int) -> None:
                    crng = random.Random(args.seed * 1000 + n)
                    while time.monotonic() < stop:
                        if crng.random() < args.write_share:
                            await _write(http, vault, crng, load)
                        else:
                            await _recall(http, vault, crng, load)

                async def sampler() -> None:
                    while time.monotonic() < stop:
                        await asyncio.sleep(min(10.0, max(1.0, args.duration / 30)))
                        rss.append((time.monotonic() - start, rss_mb(server.pid)))

                await asyncio.gather(sampler(), *(client(n) for n in range(args.clients)))
                elapsed = time.monotonic() - start
                load_cpu = await meter.since()
        present = await _present(url, vault, load.acked)
    finally:
        await _drop(url, vault, key_id)

    result = _summary(args, idle, load, present, rss, elapsed, fill_s)
    result["cpu"] = _cpu(idle_cpu, load_cpu, result)
    result["jobs_drained_s"] = round(drained, 1)
    result["loadavg_before"] = round(load_before, 1)
    print(_table(result))
    write_json(args.json, result)
    if not args.no_doc:
        _write_doc(result)
    return 0


async def _wait_up(http, server: subprocess.Popen, log_path: Path) -> None:
    import httpx

    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the server exited ({server.returncode}); see {log_path}")
        try:
            if (await http.get("/health")).status_code == 200:
                return
        except httpx.TransportError:
            pass
        await asyncio.sleep(0.5)
    raise RuntimeError(f"the server did not answer within 180 s; see {log_path}")


async def _recall(http, vault: str, rng: random.Random, tally: Tally) -> None:
    t = time.perf_counter()
    try:
        r = await http.post(f"/v1/vaults/{vault}/recall", json={"query": question(rng)})
    except Exception as exc:  # a transport error is the benchmark's result, not its failure
        tally.error("recall", type(exc).__name__)
        return
    if r.status_code == 200:
        tally.latencies["recall"].append(time.perf_counter() - t)
    else:
        tally.error("recall", f"HTTP {r.status_code}")


async def _write(http, vault: str, rng: random.Random, tally: Tally) -> None:
    key = uuid.uuid4().hex
    t = time.perf_counter()
    try:
        r = await http.post(f"/v1/vaults/{vault}/memories", json={"content": sentence(rng)},
                            headers={"Idempotency-Key": key})
    except Exception as exc:
        tally.error("write", type(exc).__name__)
        return
    if r.status_code == 200:
        tally.latencies["write"].append(time.perf_counter() - t)
        tally.acked[key] = r.json()["results"][0]["block_id"]
    else:
        tally.error("write", f"HTTP {r.status_code}")


async def _drain_jobs(url: str, *, limit_s: float) -> float:
    """Wait until the worker has run the jobs the fill queued (graph builds, lexeme counts...), so that the idle
    phase is idle: seconds waited (at most ``limit_s``)."""
    import psycopg

    t0 = time.monotonic()
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        while time.monotonic() - t0 < limit_s:
            cur = await conn.execute("SELECT count(*) FROM public.procrastinate_jobs WHERE status IN ('todo', 'doing') "
                                     "AND (scheduled_at IS NULL OR scheduled_at <= now())")
            if (await cur.fetchone())[0] == 0:
                break
            await asyncio.sleep(1.0)
    return time.monotonic() - t0


async def _present(url: str, vault: str, acked: dict[str, int]) -> int:
    """How many acknowledged writes are in the database: their stored answer and the block it names."""
    import psycopg

    async with await psycopg.AsyncConnection.connect(url) as conn:
        cur = await conn.execute(
            "SELECT k.key, (k.response->'results'->0->>'block_id')::bigint AS b, (b.id IS NOT NULL) AS there "
            "FROM memvault.idempotency_key k JOIN memvault.vault v ON v.id = k.vault_id AND v.name = %s "
            "LEFT JOIN memvault.block b ON b.vault_id = k.vault_id "
            "AND b.id = (k.response->'results'->0->>'block_id')::bigint", (vault,))
        stored = {key: (b, there) for key, b, there in await cur.fetchall()}
    return sum(1 for k, b in acked.items() if stored.get(k) == (b, True) or (b is None and k in stored))


async def _admin_key(url: str) -> tuple[str, str]:
    """An admin key for the run (revoked at its end)."""
    from app.db.connector import Database
    from app.keys import create_key

    async with Database(url, min_size=1, max_size=1) as db:
        key, info = await create_key(db, scope="admin", name="bench load")
    return key, info.id


async def _drop(url: str, vault: str, key_id: str) -> None:
    from app.db.connector import Database
    from app.errors import MemvaultError
    from app.keys import revoke_key
    from app.vaults import purge_vault

    try:
        async with Database(url, min_size=1, max_size=1) as db:
            await purge_vault(db, vault)
            await revoke_key(db, key_id)
    except MemvaultError as exc:
        print(f"bench load: could not drop {vault} or revoke key {key_id}: {exc}", file=sys.stderr)


def _cpu(idle: dict, load: dict, r: dict) -> dict:
    """CPU milliseconds per request (server + database), idle (recalls alone) and under load (the mix), and what
    the goal would take (docs/benchmarks.md's load section explains it). A write's own cost is not the mix's minus
    the idle recall's: under load a recall costs less than idle (the same questions come back, the backends' plans
    are warm), so that difference says nothing."""
    n_idle, n_load = r["idle_recall"]["n"], r["requests"]
    recall_ms = 1000 * (idle["server_s"] + idle["db_s"]) / n_idle if n_idle else float("nan")
    mix_ms = 1000 * (load["server_s"] + load["db_s"]) / n_load if n_load else float("nan")
    client_ms = 1000 * load["client_s"] / n_load if n_load else float("nan")
    cores = os.cpu_count() or 1
    # Closed loop: every client always has one request in the system, so the mean latency under load is
    # clients / throughput (Little's law), and the throughput is at most cores / (CPU per request, client included).
    floor_ms = r["clients"] * (mix_ms + client_ms) / cores
    # p95 / mean of recall under load, as measured: the goal's p95 bound as a mean, then as a throughput.
    mean_ms = 1000 * r["clients"] / r["throughput_rps"] if r.get("throughput_rps") else float("nan")
    shape = r["recall"]["p95"] / mean_ms if mean_ms == mean_ms and mean_ms else float("nan")
    goal_rps = r["clients"] / (3 * r["idle_recall"]["p95"] / 1000 / shape) if shape == shape else float("nan")
    return {"idle": idle, "load": load, "recall_ms": round(recall_ms, 1), "mix_ms": round(mix_ms, 1),
            "client_ms": round(client_ms, 1), "cores": cores,
            "max_rps": round(1000 * cores / (mix_ms + client_ms), 1) if mix_ms == mix_ms else None,
            "mean_latency_floor_ms": round(floor_ms), "goal_p95_ms": round(3 * r["idle_recall"]["p95"]),
            "p95_over_mean": round(shape, 2), "goal_rps": round(goal_rps, 1),
            "goal_cpu_ms": round(1000 * cores / goal_rps, 1) if goal_rps == goal_rps else None}


def _summary(args, idle: Tally, load: Tally, present: int, rss, elapsed: float, fill_s: float) -> dict:
    n = sum(len(v) for v in load.latencies.values()) + sum(load.errors.values())
    idle_p95 = pct(idle.latencies["recall"])["p95"]
    recall = pct(load.latencies["recall"])
    return {
        "when": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), "duration_s": round(elapsed, 1),
        "duration_requested_s": args.duration,
        "clients": args.clients, "write_share": args.write_share, "memories": args.memories,
        "workers": args.workers,
        "fill_s": round(fill_s, 1), "requests": n, "throughput_rps": round(n / elapsed, 1) if elapsed else 0,
        "idle_recall": pct(idle.latencies["recall"]), "recall": recall, "write": pct(load.latencies["write"]),
        "errors": dict(load.errors), "error_kinds": load.error_kinds,
        "error_rate": round(sum(load.errors.values()) / n, 5) if n else 0.0,
        "writes_acknowledged": len(load.acked), "writes_present": present,
        "writes_lost": len(load.acked) - present,
        "recall_p95_vs_idle": round(recall["p95"] / idle_p95, 2) if idle_p95 == idle_p95 and idle_p95 else None,
        "rss_mb": [(round(t), round(m)) for t, m in rss],
    }


def _table(r: dict) -> str:
    lines = [f"memvault bench load: {r['clients']} clients, {r['write_share']:.0%} writes, {r['duration_s']:.0f} s, "
             f"vault of {r['memories']} memories ({r['when']})",
             f"{'operation':<14}{'n':>8}{'p50 ms':>10}{'p95 ms':>10}{'p99 ms':>10}{'errors':>8}"]
    for name, key, err in (("recall (idle)", "idle_recall", None), ("recall", "recall", "recall"),
                           ("write", "write", "write")):
        s = r[key]
        lines.append(f"{name:<14}{s['n']:>8}{s['p50']:>10.0f}{s['p95']:>10.0f}{s['p99']:>10.0f}"
                     f"{r['errors'].get(err, 0) if err else '':>8}")
    lines.append(f"throughput {r['throughput_rps']} requests/s; error rate {r['error_rate']:.3%} {r['error_kinds']}")
    lines.append(f"writes acknowledged {r['writes_acknowledged']}, present {r['writes_present']}, "
                 f"lost {r['writes_lost']}; recall p95 under load / idle = {r['recall_p95_vs_idle']}")
    lines.append("server RSS (s, MB): " + ", ".join(f"{t}:{m}" for t, m in r["rss_mb"]))
    if c := r.get("cpu"):
        lines.append(f"CPU per request (server + database): recall {c['recall_ms']} ms idle, mix {c['mix_ms']} ms "
                     f"under load, client {c['client_ms']} ms; "
                     f"{c['cores']} cores: at most {c['max_rps']} requests/s, mean latency under load at least "
                     f"{c['mean_latency_floor_ms']} ms; machine busy {c['load']['machine_busy']:.0%}")
    return "\n".join(lines)


def _cpu_text(r: dict) -> list[str]:
    c = r["cpu"]
    per_request = c["mix_ms"] + c["client_ms"]
    if not c["goal_cpu_ms"]:
        verdict = "not computable from this run"
    elif per_request <= c["goal_cpu_ms"]:
        verdict = "within reach with both cores to itself"
    else:
        verdict = f"{1 - c['goal_cpu_ms'] / per_request:.0%} less would be needed, even on a quiet machine"
    return [
        "",
        f"Where the time goes, measured in the same run (CPU seconds of the server's processes and of the "
        f"PostgreSQL backends serving the benchmark database, per request): an idle recall costs {c['recall_ms']} "
        f"ms of CPU, a request of the load's mix {c['mix_ms']} ms (recalls get cheaper under load: the questions "
        f"repeat and the backends' plans are warm), the load generator {c['client_ms']} ms; PostgreSQL is "
        f"{c['load']['db_s'] / max(0.01, c['load']['db_s'] + c['load']['server_s']):.0%} of the service's CPU. "
        f"The machine was {c['load']['machine_busy']:.0%} busy (other work too). With {c['cores']} cores to itself "
        f"the service could answer at most {c['max_rps']} requests/s, so {r['clients']} closed-loop clients would "
        f"wait at least {c['mean_latency_floor_ms']} ms on average (clients x CPU per request / cores, Little's "
        f"law), whatever the number of processes or the pool. Under load recall's p95 was {c['p95_over_mean']}x "
        f"the mean wait, so the goal (p95 <= {c['goal_p95_ms']} ms) needs about {c['goal_rps']} requests/s: "
        f"{c['goal_cpu_ms']} ms of CPU per request, client included, on both cores with nothing else running, "
        f"against {per_request:.1f} ms measured ({verdict}). "
        "An idle recall is mostly CPU too, so what makes a recall cheaper lowers the idle bar about as much.",
    ]


def _write_doc(r: dict) -> None:
    goal = (r["error_rate"] == 0 and r["writes_lost"] == 0 and r["recall_p95_vs_idle"] is not None
            and r["recall_p95_vs_idle"] <= 3)
    rss = r["rss_mb"]
    step = max(1, len(rss) // 8)
    shown = rss[::step] if rss[-1] in rss[::step] else [*rss[::step], rss[-1]]
    wait_s = r["clients"] / r["throughput_rps"] if r["throughput_rps"] else float("nan")
    needed = r["clients"] / (3 * r["idle_recall"]["p95"] / 1000) if r["idle_recall"]["p95"] else float("nan")
    body = "\n".join([
        SECTION_BEGIN,
        "## Load (`memvault bench load`)",
        "",
        f"`memvault bench load --duration {r.get('duration_requested_s', r['duration_s']):.0f} --clients "
        f"{r['clients']}{f' --workers {w}' if (w := r.get('workers')) else ''}` on {r['when']}: the API "
        f"and a worker ({f'{w} API processes and the job worker' if w and w > 1 else 'one process'}) on loopback, a vault of {r['memories']} memories (the idle phase starts once the "
        f"worker has run the jobs its fill queued, {r.get('jobs_drained_s', 0):.0f} s), {r['clients']} concurrent "
        f"clients, {r['write_share']:.0%} writes (each with an Idempotency-Key) and recalls otherwise. "
        + (f"The machine's load average was {r['loadavg_before']} as the run began (2 cores: above ~1, other "
           "work shared them and the timings are pessimistic)." if "loadavg_before" in r else ""),
        "",
        "| operation | n | p50 ms | p95 ms | p99 ms | errors |",
        "|---|---|---|---|---|---|",
        *(f"| {name} | {r[k]['n']} | {r[k]['p50']:.0f} | {r[k]['p95']:.0f} | {r[k]['p99']:.0f} | {e} |"
          for name, k, e in (("recall, one client (idle)", "idle_recall", "-"),
                             ("recall under load", "recall", r["errors"].get("recall", 0)),
                             ("write under load", "write", r["errors"].get("write", 0)))),
        "",
        f"Throughput {r['throughput_rps']} requests/s; error rate {r['error_rate']:.3%}; writes acknowledged "
        f"{r['writes_acknowledged']}, present afterwards {r['writes_present']}, lost {r['writes_lost']}; recall p95 "
        f"under load is {r['recall_p95_vs_idle']}x the idle p95 (goal: zero errors, zero lost writes, at most 3x: "
        f"{'met' if goal else 'not met'}). Server RSS {rss[0][1]} MB at the start, {max(m for _, m in rss)} MB at "
        f"most, {rss[-1][1]} MB at the end (sampled: " + ", ".join(f"{t} s {m}" for t, m in shown) + ").",
        "",
        f"{r['clients']} clients that each send their next request when the last one is answered, at "
        f"{r['throughput_rps']} requests/s, wait {wait_s:.1f} s per request on average (Little's law): under this "
        "load the server is saturated and the latency is queueing (one process, the CPU shared with the clients and "
        f"with other work). Recall p95 within 3x the idle p95 needs about {needed:.0f} requests/s at this "
        "concurrency.",
        *(_cpu_text(r) if r.get("cpu") else []),
        SECTION_END,
    ])
    text = DOC.read_text(encoding="utf-8") if DOC.exists() else ""
    if SECTION_BEGIN in text:
        text = re.sub(re.escape(SECTION_BEGIN) + ".*?" + re.escape(SECTION_END), lambda _: body, text, flags=re.S)
    else:
        text = text.rstrip("\n") + "\n\n" + body + "\n"
    DOC.write_text(text.rstrip("\n") + "\n", encoding="utf-8")
    print(f"wrote the load section of {DOC}", file=sys.stderr)
