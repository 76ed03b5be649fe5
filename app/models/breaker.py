"""One circuit breaker for every model backend (seed 000: "3 consecutive failures -> 600 s of bypass").

States: ``closed`` (calls pass) -> ``open`` after ``failures`` consecutive failures (calls are refused with
:class:`~app.errors.CircuitOpen` without reaching the backend) -> ``half_open`` once ``open_s`` seconds have
passed (exactly one probe call passes; the others are still refused) -> ``closed`` if the probe succeeds, back to
``open`` (a new trip) if it fails.

The state lives behind a :class:`threading.Lock` held only for a few assignments (never across an ``await``),
so one breaker is safe from coroutines and from worker threads alike. The clock is injectable so tests do not
sleep. The breakers of one service live in its :class:`BreakerRegistry` (``services.breakers``, owned by the
model cache that built the clients they guard), which the health endpoint reports: none is process-wide.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Literal

from app.errors import CircuitOpen

State = Literal["closed", "open", "half_open"]

class CircuitBreaker:
    def __init__(
        self,
        name: str,
        failures: int = 3,
        open_s: float = 600.0,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if failures < 1:
            raise ValueError("failures must be >= 1")
        self.name = name
        self.failure_threshold = failures
        self.open_s = float(open_s)
        self._clock = clock
        self._lock = threading.Lock()
        self._state: State = "closed"
        self._consecutive = 0
        self._opened_at = 0.0
        self._probe_in_flight = False
        self.calls = 0
        self.successes = 0
        self.failures = 0
        self.trips = 0
        self.short_circuits = 0
        self.last_error: str | None = None

    # --- state --------------------------------------------------------------------------------
    @property
    def state(self) -> State:
        with self._lock:
            return self._current_state()

    def _current_state(self) -> State:
        if self._state == "open" and self._clock() - self._opened_at >= self.open_s:
            self._state = "half_open"
            self._probe_in_flight = False
        return self._state

    def acquire(self) -> None:
        """Ask to make one call. Raises CircuitOpen when the call must be skipped."""
        with self._lock:
            state = self._current_state()
            if state == "open" or (state == "half_open" and self._probe_in_flight):
                self.short_circuits += 1
                retry_in = max(0.0, self.open_s - (self._clock() - self._opened_at))
                raise CircuitOpen(
                    f"circuit {self.name} is {state}; backend skipped",
                    hint=f"retry in {retry_in:.0f}s; last error: {self.last_error}",
                )
            if state == "half_open":
                self._probe_in_flight = True
            self.calls += 1

    def record_success(self) -> None:
        with self._lock:
            self.successes += 1
            self._consecutive = 0
            self._state = "closed"
            self._probe_in_flight = False

    def record_failure(self, error: BaseException | str | None = None) -> None:
        with self._lock:
            self.failures += 1
            self._consecutive += 1
            if error is not None:
                self.last_error = (
                    f"{type(error).__name__}: {error}" if isinstance(error, BaseException) else error
                )
            if self._state == "half_open" or self._consecutive >= self.failure_threshold:
                if self._state != "open":
                    self.trips += 1
                self._state = "open"
                self._opened_at = self._clock()
                self._probe_in_flight = False

    def release(self) -> None:
        """Give back an acquired call without a verdict (the caller was cancelled)."""
        with self._lock:
            self._probe_in_flight = False

    def reset(self) -> None:
        with self._lock:
            self._state = "closed"
            self._consecutive = 0
            self._probe_in_flight = False

    @contextmanager
    def guard(self) -> Iterator[None]:
        """``with breaker.guard(): ...`` — acquire, then record success or failure (any exception).

        Works around ``await`` too: the lock is not held inside the block.
        """
        self.acquire()
        try:
            yield
        except Exception as exc:
            self.record_failure(exc)
            raise
        except BaseException:  # cancelled by the caller: not the backend's fault
            self.release()
            raise
        else:
            self.record_success()

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            state = self._current_state()
            return {
                "state": state,
                "calls": self.calls,
                "successes": self.successes,
                "failures": self.failures,
                "consecutive_failures": self._consecutive,
                "trips": self.trips,
                "short_circuits": self.short_circuits,
                "failure_threshold": self.failure_threshold,
                "open_s": self.open_s,
                "last_error": self.last_error,
            }

    def __repr__(self) -> str:
        return f"<CircuitBreaker {self.name} {self.state}>"


class BreakerRegistry:
    """The breakers of one service, by name (one per backend and URL, and the read track's rerank breaker)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_name: dict[str, CircuitBreaker] = {}

    def get(self, name: str, failures: int = 3, open_s: float = 600.0) -> CircuitBreaker:
        """The breaker called ``name``, created on first use."""
        with self._lock:
            breaker = self._by_name.get(name)
            if breaker is None:
                breaker = self._by_name[name] = CircuitBreaker(name, failures, open_s)
            return breaker

    def snapshot(self) -> dict[str, dict[str, Any]]:
        """State and counters of every breaker, by name (for ``/health``)."""
        with self._lock:
            breakers = list(self._by_name.values())
        return {b.name: b.snapshot() for b in sorted(breakers, key=lambda b: b.name)}
