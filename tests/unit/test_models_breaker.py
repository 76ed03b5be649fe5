"""CircuitBreaker transitions with a fake clock: closed -> open -> half-open -> closed / open again."""

from __future__ import annotations

import asyncio

import pytest

from app.errors import CircuitOpen
from app.models.breaker import BreakerRegistry, CircuitBreaker


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def boom() -> None:
    raise RuntimeError("backend down")


def fail(b: CircuitBreaker) -> None:
    with pytest.raises(RuntimeError), b.guard():
        boom()


def test_opens_after_n_consecutive_failures_and_short_circuits() -> None:
    clock = Clock()
    b = CircuitBreaker("t-open", failures=3, open_s=600, clock=clock)
    fail(b)
    fail(b)
    assert b.state == "closed"
    fail(b)
    assert b.state == "open"
    with pytest.raises(CircuitOpen) as exc:
        b.acquire()
    assert "t-open" in str(exc.value)
    snap = b.snapshot()
    assert snap["state"] == "open"
    assert (snap["calls"], snap["failures"], snap["trips"], snap["short_circuits"]) == (3, 3, 1, 1)
    assert "backend down" in snap["last_error"]


def test_success_resets_the_consecutive_count() -> None:
    b = CircuitBreaker("t-reset", failures=3, clock=Clock())
    fail(b)
    fail(b)
    with b.guard():
        pass
    fail(b)
    fail(b)
    assert b.state == "closed"
    assert b.snapshot()["consecutive_failures"] == 2


def test_half_open_probe_success_closes() -> None:
    clock = Clock()
    b = CircuitBreaker("t-probe-ok", failures=1, open_s=600, clock=clock)
    fail(b)
    assert b.state == "open"
    clock.t += 599
    assert b.state == "open"
    clock.t += 1
    assert b.state == "half_open"
    b.acquire()  # the single probe passes ...
    with pytest.raises(CircuitOpen):  # ... and a concurrent call is still refused
        b.acquire()
    b.record_success()
    assert b.state == "closed"
    with b.guard():
        pass


def test_half_open_probe_failure_reopens_for_another_period() -> None:
    clock = Clock()
    b = CircuitBreaker("t-probe-bad", failures=3, open_s=10, clock=clock)
    for _ in range(3):
        fail(b)
    clock.t += 10
    assert b.state == "half_open"
    fail(b)  # one failed probe is enough to reopen
    assert b.state == "open"
    assert b.trips == 2
    clock.t += 9.9
    assert b.state == "open"
    clock.t += 0.1
    assert b.state == "half_open"


async def test_async_use_and_cancellation_is_not_a_failure() -> None:
    clock = Clock()
    b = CircuitBreaker("t-async", failures=1, open_s=5, clock=clock)

    async def slow() -> None:
        with b.guard():
            await asyncio.sleep(10)

    task = asyncio.create_task(slow())
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert b.state == "closed" and b.failures == 0

    async def broken() -> None:
        with b.guard():
            await asyncio.sleep(0)
            raise ConnectionError("refused")

    with pytest.raises(ConnectionError):
        await broken()
    assert b.state == "open"
    # Many concurrent callers while open: all short-circuited, none reaches the backend.
    results = await asyncio.gather(*(broken() for _ in range(5)), return_exceptions=True)
    assert all(isinstance(r, CircuitOpen) for r in results)
    assert b.short_circuits == 5


def test_registry_snapshot_lists_its_breakers() -> None:
    registry, other = BreakerRegistry(), BreakerRegistry()
    b = registry.get("test:registry", failures=2, open_s=1)
    assert registry.get("test:registry") is b
    fail(b)
    snap = registry.snapshot()
    assert snap["test:registry"]["failures"] == 1
    assert snap["test:registry"]["state"] == "closed"
    assert other.snapshot() == {} and other.get("test:registry") is not b  # one registry per service
