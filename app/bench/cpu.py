"""CPU time a benchmark spent, in the writer process and in the PostgreSQL backends serving it.

On a shared machine the wall-clock rate moves with everyone else's load; CPU seconds per item barely do. Writer
CPU (every thread of this process: the event loop, the embedding threads) plus the CPU of the backends connected
to the benchmark's database from this process give what an item costs the machine, and so the rate two idle cores could reach
(``bound_per_s``: both cores busy all the time, which pipelining approaches and one-call-at-a-time does not).
Backends are read from ``/proc`` (the embedded cluster runs on this kernel); where they cannot be read (a remote
server), only the writer's CPU is reported.
"""

from __future__ import annotations

import os
import resource
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from app.db.connector import Database

_TICK = os.sysconf("SC_CLK_TCK")


def _self_cpu() -> tuple[float, float]:
    """(this process's CPU, its children's that have ended): the bulk path's screening process, shut down when its
    import ends, is counted as the writer's, and told apart."""
    r, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime, c.ru_utime + c.ru_stime


def proc_cpu(pid: int) -> float | None:
    """CPU seconds (user + system) process ``pid`` has used so far; None when it is gone or unreadable."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / _TICK  # utime, stime


def _own_ports() -> set[int]:
    """Local TCP ports of this process's sockets (/proc/self/fd -> socket inodes -> /proc/net/tcp{,6})."""
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    ports = set()
    for table in ("/proc/self/net/tcp", "/proc/self/net/tcp6"):
        try:
            with open(table) as fh:
                next(fh)
                for line in fh:
                    f = line.split()
                    if f[9] in inodes:
                        ports.add(int(f[1].rsplit(":", 1)[1], 16))
        except OSError:
            continue
    return ports


@dataclass(frozen=True, slots=True)
class CpuUse:
    writer_s: float  # the writer process's CPU and its ended children's
    postgres_s: float | None
    children_s: float = 0.0  # of writer_s, the children's (the bulk path's screening process)

    def per_item_ms(self, n: int, cores: int = 2) -> dict[str, float | None]:
        total = self.writer_s + (self.postgres_s or 0.0)
        out = {"writer": round(self.writer_s * 1000 / n, 3),
               "postgres": round(self.postgres_s * 1000 / n, 3) if self.postgres_s is not None else None,
               "bound_per_s": round(n * cores / total, 1) if total else None}
        if self.children_s:
            out["writer_child"] = round(self.children_s * 1000 / n, 3)
        return out


class CpuMeter:
    """``async with meter("append"): ...`` adds that section's CPU to ``meter.use["append"]``."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.use: dict[str, CpuUse] = {}

    async def _pids(self) -> list[int]:
        """The backends serving this process: its own connections' client ports (other benchmarks may use the same
        database at the same time)."""
        rows = await self.db.fetchall("SELECT pid, client_port FROM pg_stat_activity "
                                      "WHERE datname = current_database() AND client_port IS NOT NULL")
        mine = _own_ports()
        return [int(r["pid"]) for r in rows if int(r["client_port"]) in mine]

    @asynccontextmanager
    async def __call__(self, section: str) -> AsyncIterator[None]:
        backends = {p: c for p in await self._pids() if (c := proc_cpu(p)) is not None}
        own, children = _self_cpu()
        yield
        own_after, children_after = _self_cpu()
        children = children_after - children
        writer = own_after - own + children
        readable = [c - backends.get(p, 0.0) for p in await self._pids() if (c := proc_cpu(p)) is not None]
        pg = max(0.0, sum(readable)) if readable else None
        had = self.use.get(section)
        if had is not None:
            writer += had.writer_s
            children += had.children_s
            pg = None if pg is None or had.postgres_s is None else pg + had.postgres_s
        self.use[section] = CpuUse(writer, pg, children)

    def per_item_ms(self, section: str, n: int) -> dict[str, float | None] | None:
        use = self.use.get(section)
        return use.per_item_ms(n) if use is not None and n else None
