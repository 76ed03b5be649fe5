"""Hot standbys that serve reads (``MEMVAULT_REPLICA_URLS``): their health, their replay position, and which one
a read-only request goes to.

Each standby has a pool of its own (:class:`StandbyDatabase`). A check every ``replica_check_s`` records whether it
answers, is still a standby, and how many WAL bytes it trails the primary by; one that is down, promoted or
further behind than ``replica_max_lag_bytes`` serves nothing until a later check finds it well.

Read-your-writes: a write's response carries the primary's WAL position after its commit (``X-Memvault-LSN``,
:data:`LSN_HEADER`); a request that sends it back is served by a standby only once that standby has replayed it
(``pg_last_wal_replay_lsn()``), otherwise by the primary. A standby whose connection cannot be had when a read
starts is marked down and that read is served by the primary (a standby that fails in the middle of a read fails
the read, 503, as the primary would).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

import psycopg
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from app.db.connector import Database, redact, scope, translate
from app.db.queries import Q
from app.lsn import LSN_HEADER, format_lsn, parse_lsn

log = logging.getLogger(__name__)

__all__ = ["LSN_HEADER", "ReplicaSet", "StandbyDatabase", "StandbyState", "format_lsn", "parse_lsn"]


@dataclass
class StandbyState:
    """What the last check (or the last failed read) found."""

    healthy: bool = False
    replay_lsn: int = 0
    lag_bytes: int | None = None
    replay_age_s: float | None = None
    checked_at: float = 0.0
    error: str | None = None


class StandbyDatabase(Database):
    """A standby's pool. A transaction on it that cannot get a connection, or starts while the standby is marked
    down, is run by the primary (``fallback``) instead, and the standby is marked down until the next check."""

    def __init__(self, url: str, *, fallback: Database, min_size: int, max_size: int, timeout: float) -> None:
        # a connection the server dropped (it stopped) is found before a read is sent on it
        super().__init__(url, min_size=min_size, max_size=max_size, timeout=timeout,
                         check=AsyncConnectionPool.check_connection, name="memvault-standby")
        self.fallback = fallback
        self.state = StandbyState()

    async def open(self) -> None:
        await self.pool.open(wait=False)  # a standby that is down at start-up is found so by its first check

    def mark_down(self, error: str) -> None:
        if self.state.healthy:
            log.warning("standby %s marked down: %s", redact(self.url), error)
        self.state.healthy, self.state.error = False, error

    @asynccontextmanager
    async def _lent(self) -> AsyncIterator[psycopg.AsyncConnection | None]:
        """A connection of the standby's, or None when it is marked down or none can be had (it is then marked
        down): the caller goes to the primary. A driver error on the connection comes out translated, and a
        connection error marks the standby down; the connection goes back as the pool lends it."""
        conn = None
        if self.state.healthy:
            try:
                conn = await self.pool.getconn()
            except (PoolTimeout, psycopg.OperationalError) as exc:
                self.mark_down(f"no connection: {exc}")
        if conn is None:
            yield None
            return
        try:
            yield conn
        except psycopg.Error as exc:
            if isinstance(exc, psycopg.OperationalError):
                self.mark_down(str(exc).strip())
            raise translate(exc) from exc
        finally:
            await Database.lend_back(conn)
            await self.pool.putconn(conn)

    @asynccontextmanager
    async def transaction(self, vault_id: UUID | None = None, *,
                          pipeline: bool = False) -> AsyncIterator[psycopg.AsyncConnection]:
        """``pipeline`` is taken for the primary's signature; on a standby the transaction is a plain one."""
        async with self._lent() as conn:
            if conn is None:
                async with self.fallback.transaction(vault_id, pipeline=pipeline) as primary_conn:
                    yield primary_conn
                return
            async with conn.transaction():
                await scope(conn, vault_id)
                yield conn

    @asynccontextmanager
    async def session(self) -> AsyncIterator[psycopg.AsyncConnection]:
        """As :meth:`transaction`: a connection of the standby's, or the primary's session when none can be had
        (the standby is then marked down); a connection error on it marks the standby down."""
        async with self._lent() as conn:
            if conn is None:
                async with self.fallback.session() as primary_conn:
                    yield primary_conn
                return
            yield conn

    @asynccontextmanager
    async def pipelined(self, conn: psycopg.AsyncConnection, vault_id: UUID) -> AsyncIterator[None]:
        """On a standby a vault transaction is a plain one (as :meth:`transaction`'s)."""
        async with conn.transaction():
            await scope(conn, vault_id)
            yield

    async def check(self, primary_lsn: int | None, max_lag_bytes: int) -> StandbyState:
        """Ask the standby where it is; healthy: it answers, is in recovery and trails by at most max_lag_bytes."""
        st = self.state
        try:
            async with self.pool.connection(timeout=self.pool.timeout) as conn:
                cur = await conn.execute(Q.standby_position)
                row = await cur.fetchone()
                await conn.rollback()
        except (PoolTimeout, psycopg.Error) as exc:
            self.mark_down(f"check failed: {str(exc).strip() or type(exc).__name__}")
            st.checked_at, st.lag_bytes = time.time(), None
            return st
        assert row is not None
        st.checked_at, st.replay_age_s = time.time(), row["replay_age_s"]
        if not row["in_recovery"] or row["replay_lsn"] is None:
            st.healthy, st.error, st.lag_bytes = False, "not a standby (promoted, or not replicating)", None
            return st
        st.replay_lsn = parse_lsn(row["replay_lsn"])
        st.lag_bytes = max(0, primary_lsn - st.replay_lsn) if primary_lsn is not None else None
        lagging = st.lag_bytes is not None and st.lag_bytes > max_lag_bytes
        if not st.healthy and not lagging:
            log.info("standby %s serves reads (%s bytes behind)", redact(self.url), st.lag_bytes)
        st.healthy = not lagging
        st.error = f"{st.lag_bytes} bytes behind the primary (limit {max_lag_bytes})" if lagging else None
        return st

    async def replayed(self, lsn: int) -> bool:
        """Has this standby replayed ``lsn``? The last check's answer if it says yes, else the standby's own now."""
        if self.state.replay_lsn >= lsn:
            return True
        try:
            row = await self.fetchone(Q.standby_position)
        except Exception as exc:  # noqa: BLE001 - the read goes to the primary; the check records why
            log.info("standby %s: replay position unknown (%s)", redact(self.url), exc)
            return False
        if row is None or not row["in_recovery"] or row["replay_lsn"] is None:
            return False
        self.state.replay_lsn = max(self.state.replay_lsn, parse_lsn(row["replay_lsn"]))
        return self.state.replay_lsn >= lsn


@dataclass
class ReplicaSet:
    """The standbys of one primary, checked by a background task while the service runs."""

    primary: Database
    standbys: list[StandbyDatabase]
    max_lag_bytes: int
    check_s: float
    _turn: Any = field(default_factory=lambda: itertools.count())
    _task: asyncio.Task | None = None

    @classmethod
    def of(cls, primary: Database, urls: list[str], *, max_lag_bytes: int, check_s: float, timeout: float,
           min_size: int, max_size: int) -> ReplicaSet:
        return cls(primary, [StandbyDatabase(u, fallback=primary, min_size=min_size, max_size=max_size,
                                             timeout=timeout)
                             for u in urls], max_lag_bytes, check_s)

    async def open(self) -> None:
        for s in self.standbys:
            await s.open()
        await self.check()
        self._task = asyncio.get_running_loop().create_task(self._loop(), name="memvault-standby-check")

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        for s in self.standbys:
            await s.close()

    async def primary_lsn(self) -> int:
        row = await self.primary.fetchone(Q.wal_position)
        assert row is not None
        return parse_lsn(row["lsn"])

    async def check(self) -> list[StandbyState]:
        try:
            lsn: int | None = await self.primary_lsn()
        except Exception as exc:  # noqa: BLE001 - the primary's outage is /health's to report; lag is unknown
            log.info("standby check: the primary's WAL position is unknown (%s)", exc)
            lsn = None
        return list(await asyncio.gather(*(s.check(lsn, self.max_lag_bytes) for s in self.standbys)))

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(self.check_s)
            try:
                await self.check()
            except Exception:  # a check must never end the loop
                log.exception("standby check failed")

    async def choose(self, min_lsn: int | None = None) -> StandbyDatabase | None:
        """A healthy standby (in turn) that has replayed ``min_lsn``; None: the primary serves the read."""
        healthy = [s for s in self.standbys if s.state.healthy]
        if not healthy:
            return None
        start = next(self._turn)
        for i in range(len(healthy)):
            s = healthy[(start + i) % len(healthy)]
            if min_lsn is None or await s.replayed(min_lsn):
                return s
        return None

    def snapshot(self) -> list[dict[str, Any]]:
        """For /health: each standby's URL (no password), whether it serves reads, its lag."""
        return [{"url": redact(s.url), "healthy": s.state.healthy, "lag_bytes": s.state.lag_bytes,
                 "replay_lsn": format_lsn(s.state.replay_lsn) if s.state.replay_lsn else None,
                 "replay_age_s": s.state.replay_age_s, "checked_s_ago": round(time.time() - s.state.checked_at, 1)
                 if s.state.checked_at else None, "error": s.state.error} for s in self.standbys]
