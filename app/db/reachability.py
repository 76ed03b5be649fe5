"""Whether the database answers, as the service last found it: a restart, a crash or an outage of PostgreSQL
is a pause the service waits out, not a fault it dies of.

The first connection error a request meets marks the server down (``Reachability.failed``); from then on every
request is refused at once (``check``: 503 with Retry-After, no wait for the pool's timeout) while one probe task
connects every ``probe_s`` seconds on a connection of its own. The probe's first success replaces the pool (its
connections died with the server, and its own reconnection attempts back off up to half a minute) and marks the
server up again: the service is back within one probe interval of the server.

A pool timeout (no connection within ``pool_timeout_s``) proves nothing by itself (every connection may just be
busy): it starts the probe, which marks the server down only if it cannot connect either.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import psycopg

from app.errors import DatabaseUnavailable

log = logging.getLogger(__name__)


@dataclass
class Reachability:
    url: str
    on_back: Callable[[], Awaitable[None]]  # the server answers again after being down (the pool is renewed)
    probe_s: float = 0.5
    connect_timeout_s: int = 2
    down_since: float | None = None  # time.time() of the first failure; None: the server answers
    last_error: str | None = None
    outages: int = 0  # how many times the server went away since start
    loop: asyncio.AbstractEventLoop | None = None  # the pool's (set when it opens)
    _probe: asyncio.Future | concurrent.futures.Future | None = field(default=None, repr=False)

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
        """One probe at a time, in the loop that owns the pool (``loop``; a test client may call from another)."""
        if self._probe is not None and not self._probe.done():
            return
        here = asyncio.get_running_loop()
        if self.loop is None or self.loop is here or self.loop.is_closed():
            self._probe = here.create_task(self._probe_until_up(), name="database-probe")
        else:
            self._probe = asyncio.run_coroutine_threadsafe(self._probe_until_up(), self.loop)

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
                try:
                    await self.on_back()
                except Exception as exc:  # noqa: BLE001 - down again while the pool was renewed: go on probing
                    self.last_error = _first_line(exc)
                    await asyncio.sleep(self.probe_s)
                    continue
                log.warning("database reachable again after %.1f s", time.time() - self.down_since)
                self.down_since = None
            return

    async def wait_up(self) -> None:
        """Return once a connection of the probe's reaches the server (at once if it answers now)."""
        self._start_probe()
        probe = self._probe
        await asyncio.shield(probe if isinstance(probe, asyncio.Future) else asyncio.wrap_future(probe))

    async def close(self) -> None:
        probe = self._probe
        if probe is not None and not probe.done():
            probe.cancel()
            if isinstance(probe, asyncio.Future) and probe.get_loop() is asyncio.get_running_loop():
                await asyncio.gather(probe, return_exceptions=True)  # closing: its outcome no longer matters


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
