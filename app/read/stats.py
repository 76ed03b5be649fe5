"""Process-wide counters of the read track: gate skips, breaker trips, blends, prefetch hits and misses."""

from __future__ import annotations

import threading
from collections import Counter


class ReadCounters:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._c: Counter[str] = Counter()

    def incr(self, name: str, n: int = 1) -> None:
        with self._lock:
            self._c[name] += n

    def get(self, name: str) -> int:
        with self._lock:
            return self._c[name]

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return dict(sorted(self._c.items()))

    def reset(self) -> None:
        with self._lock:
            self._c.clear()


COUNTERS = ReadCounters()


def snapshot() -> dict[str, object]:
    """Counters plus the read track's breaker states (for the API and ``/health``)."""
    from app.models.breaker import breaker_snapshot

    return {
        "counters": COUNTERS.snapshot(),
        "breakers": {k: v for k, v in breaker_snapshot().items() if k.startswith("read.")},
    }
