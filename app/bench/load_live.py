"""What `memvault bench load` needs of the live service it loads: the requests (a recall, a write with an
Idempotency-Key), the text they carry, and the readings taken beside them: CPU of the server's process tree and of
the PostgreSQL backends serving the benchmark database (from /proc), resident memory, the job queue, and the
acknowledged writes found in the database afterwards."""

from __future__ import annotations

import asyncio
import random
import re
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from app.bench.openloop import Answer, Ops

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


def http_ops(http, vault: str) -> Ops:
    """A recall (a question) and a write (a new memory with a fresh Idempotency-Key) on ``vault`` through the
    httpx client ``http``; a transport failure is an answer too (its exception's name)."""

    async def recall(rng: random.Random) -> Answer:
        try:
            r = await http.post(f"/v1/vaults/{vault}/recall", json={"query": question(rng)})
        except Exception as exc:  # noqa: BLE001 - the benchmark's result, not its failure
            return Answer(type(exc).__name__, False)
        return Answer(str(r.status_code), r.status_code == 200)

    async def write(rng: random.Random) -> Answer:
        key = uuid.uuid4().hex
        try:
            r = await http.post(f"/v1/vaults/{vault}/memories", json={"content": sentence(rng)},
                                headers={"Idempotency-Key": key})
        except Exception as exc:  # noqa: BLE001
            return Answer(type(exc).__name__, False)
        if r.status_code != 200:
            return Answer(str(r.status_code), False)
        return Answer("200", True, (key, r.json()["results"][0]["block_id"]))

    return Ops(recall=recall, write=write)


def rss_mb(pid: int) -> float:
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0.0
    m = re.search(r"VmRSS:\s+(\d+) kB", text)
    return int(m.group(1)) / 1024 if m else 0.0


def cpu_s(pids: list[int]) -> float:
    """CPU seconds (user + system) the processes ``pids`` have used so far (a gone one counts 0)."""
    from app.bench.cpu import proc_cpu

    return sum(proc_cpu(pid) or 0.0 for pid in pids)


def process_tree(root: int) -> list[int]:
    """``root`` and its descendants (the API processes and the job worker of `memvault serve`)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(stat.parent.name))
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
    """CPU used between :meth:`mark` and :meth:`since` by the service (the server's process tree: API processes
    and job worker), by PostgreSQL (the backends connected to the benchmark database: a backend that started
    meanwhile counts whole, one that ended meanwhile is missed; the cluster's background processes are not
    counted) and by this load generator, with the machine's busy share (other work too)."""

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
        return {"service_s": round(end["server"] - self.start["server"], 2), "postgres_s": round(db, 2),
                "client_s": round(end["client"] - self.start["client"], 2),
                "wall_s": round(end["at"] - self.start["at"], 2), "machine_busy": round(busy, 3)}


async def wait_up(http, server: subprocess.Popen, log_path: Path) -> None:
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


async def queue_depth(url: str) -> int:
    """Jobs due and not done (the worker's backlog)."""
    import psycopg

    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        cur = await conn.execute("SELECT count(*) FROM public.procrastinate_jobs WHERE status IN ('todo', 'doing') "
                                 "AND (scheduled_at IS NULL OR scheduled_at <= now())")
        return int((await cur.fetchone())[0])


async def drain_jobs(url: str, *, limit_s: float) -> float:
    """Wait until the worker has run the jobs due (graph builds, lexeme counts...), so that a phase starts with
    no backlog of the one before: seconds waited (at most ``limit_s``)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit_s and await queue_depth(url):
        await asyncio.sleep(1.0)
    return time.monotonic() - t0


async def writes_present(url: str, vault: str, acked: dict[str, int | None]) -> int:
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


async def admin_key(url: str) -> tuple[str, str]:
    """An admin key for the run (revoked at its end)."""
    from app.db.connector import Database
    from app.keys import create_key

    async with Database(url, min_size=1, max_size=1) as db:
        key, info = await create_key(db, scope="admin", name="bench load")
    return key, info.id


async def drop(url: str, vault: str, key_id: str) -> None:
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
