"""The pieces of riding out a database outage that need no server: which driver errors mean the server went away,
the restart backoff, and the refusal while the server is known to be down."""

from __future__ import annotations

import psycopg
import pytest
from psycopg import errors as pgerrors

from app.db.reachability import Backoff, Reachability, lost_server
from app.errors import DatabaseUnavailable


def test_only_connection_failures_mark_the_server_down() -> None:
    assert lost_server(psycopg.OperationalError("server closed the connection unexpectedly"))  # no SQLSTATE
    assert lost_server(pgerrors.AdminShutdown("terminating connection due to administrator command"))
    assert lost_server(pgerrors.CannotConnectNow("the database system is starting up"))
    assert lost_server(pgerrors.CrashShutdown("terminating connection because of crash of another process"))
    assert not lost_server(pgerrors.SerializationFailure("could not serialize access"))
    assert not lost_server(pgerrors.DeadlockDetected("deadlock detected"))
    assert not lost_server(pgerrors.QueryCanceled("canceling statement due to statement timeout"))
    assert not lost_server(pgerrors.UniqueViolation("duplicate key"))


def test_backoff_doubles_to_its_cap_and_starts_over_after_a_long_run() -> None:
    pause = Backoff(0.5, 10)
    assert [pause.next(ran_for=0) for _ in range(7)] == [0.5, 1, 2, 4, 8, 10, 10]
    assert pause.next(ran_for=60) == 0.5  # the server was up for a while: a new outage


async def test_a_down_server_is_refused_at_once_until_the_probe_reaches_it() -> None:
    back = []

    async def on_back() -> None:
        back.append(True)

    # Nothing listens on port 1: the probe keeps failing, requests are refused without waiting.
    reach = Reachability("postgresql://nobody@127.0.0.1:1/none", on_back=on_back, probe_s=0.05)
    reach.check()  # up: nothing to refuse
    reach.failed(psycopg.OperationalError("server closed the connection unexpectedly"))
    with pytest.raises(DatabaseUnavailable) as info:
        reach.check()
    assert info.value.status == 503 and info.value.headers["Retry-After"]
    snap = reach.snapshot()
    assert snap["reachable"] is False and snap["outages"] == 1 and "closed" in snap["last_error"]
    await reach.close()
    assert back == []
