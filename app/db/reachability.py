"""Whether the database answers, as the service last found it: a restart, a crash or an outage of PostgreSQL
is a pause the service waits out, not a fault it dies of.

The first connection error a request meets marks the server down (``Reachability.failed``); from then on every
request is refused at once (``check``: 503 with Retry-After, no wait for the pool's timeout) while one probe task
connects every ``probe_s`` seconds on a connection of its own. The probe's first success drops the pool's
connections that died with the server (``AsyncConnectionPool.check``) and marks the server up again, so the
requests after it run on fresh connections: the service is back within one probe interval of the server.

A pool timeout (no connection within ``pool_timeout_s``) proves nothing by itself (every connection may just be
busy): it starts the probe, which marks the server down only if it cannot connect either.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field

import psycopg
from psycopg_pool import AsyncConnectionPool

from app.errors import DatabaseUnavailable

log = logging.getLogger(__name__)


@dataclass
class Reachability:
    url: str
    pool: AsyncConnectionPool
    probe_s: float = 0.5
    connect_timeout_s: int = 2
    down_since: float | None = None  # time.time() of the first failure; None: the server answers
    last_error: str | None = None
    outages: int = 0  # how many times the server went away since start
    _probe: asyncio.Task | None = field(default=None, repr=False)

    @property
    def up(self) -> bool:
        return self.down_since is None

    def snapshot(self) -> dict:
        """For ``/health``: up or down, since when and why, outages so far."""
        down_for = None if self.down_since is None else round(time.time() - self.down_since, 1)
        return {"reachable": self.up, "down_for_s": down_for, "last_error": self.last_error if not self.up else None,
                "outages": self.outages}

    def check(self) -> None:
        """Refuse at once (503, Retry-After) while the server is known to be down."""
        if self.down_since is not None:
            raise DatabaseUnavailable(
                f"database unavailable for {time.time() - self.down_since:.0f} s ({self.last_error})",
                hint="the database is restarting or unreachable; retry after the Retry-After seconds")

    def failed(self, exc: BaseException) -> None:
        """A connection broke or could not be made: the server is down until the probe reaches it."""
        if self.down_since is None:
            self.down_since = time.time()
            self.outages += 1
            log.warning("database unreachable: %s; requests get 503 until a probe reaches it", _first_line(exc))
        self.last_error = _first_line(exc)
        self._start_probe()

    def suspect(self) -> None:
        """No connection came from the pool in time: probe, and mark the server down only if the probe fails."""
        self._start_probe()

    def _start_probe(self) -> None:
        if self._probe is None or self._probe.done():
            self._probe = asyncio.get_running_loop().create_task(self._probe_until_up(), name="database-probe")

    async def _probe_until_up(self) -> None:
        while True:
            try:
                conn = await psycopg.AsyncConnection.connect(self.url, connect_timeout=self.connect_timeout_s,
                                                             autocommit=True)
                try:
                    await conn.execute("SELECT 1")
                finally:
                    await conn.close()
            except psycopg.Error as exc:
                if self.down_since is None:
                    self.failed(exc)  # a pool timeout and the server does not answer: down
                self.last_error = _first_line(exc)
                await asyncio.sleep(self.probe_s)
                continue
            if self.down_since is not None:
                await self.pool.check()  # the connections that died with the server go, new ones come
                log.warning("database reachable again after %.1f s", time.time() - self.down_since)
                self.down_since = None
            return

    async def close(self) -> None:
        if self._probe is not None and not self._probe.done():
            self._probe.cancel()
            try:
                await self._probe
            except (asyncio.CancelledError, Exception):  # noqa: S110 - closing: the probe's outcome no longer matters
                pass


class Backoff:
    """Pauses between restarts: ``first``, doubled each time up to ``cap``; back to ``first`` after a run that
    lasted longer than ``cap`` (the server was up: this is a new outage, not the same one)."""

    def __init__(self, first: float, cap: float) -> None:
        self.first, self.cap, self.current = first, cap, first

    def next(self, *, ran_for: float) -> float:
        if ran_for > self.cap:
            self.current = self.first
        delay, self.current = self.current, min(self.cap, self.current * 2)
        return delay


# SQLSTATEs that say the server went away (class 08: connection exceptions; 57P01-57P03: shut down, crashed, not
# accepting connections yet), as opposed to a statement's own failure (a serialization failure, a deadlock).
_SERVER_GONE = ("08", "57P01", "57P02", "57P03")


def lost_server(exc: BaseException) -> bool:
    """A driver error that means the server (not the statement) failed: the connection broke or none was made."""
    if not isinstance(exc, psycopg.OperationalError):
        return False
    sqlstate = getattr(exc, "sqlstate", None)
    return sqlstate is None or sqlstate.startswith(_SERVER_GONE)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
