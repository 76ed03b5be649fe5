"""The two kinds of cache the service keeps, as objects that ``Services`` owns (never module or class globals):
two services in one process cache apart, and a test builds a fresh one with fresh services.

- :class:`BuiltOnce`: a value per key built once, however many callers ask at the same time (the intent
  archetypes' vectors of a database and embedder).
- :class:`TtlCache`: a value per key, fresh for ``ttl_s`` seconds (a vault's size, a vault's intent habits).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class BuiltOnce(Generic[K, V]):
    def __init__(self) -> None:
        self._values: dict[K, V] = {}
        self._lock = asyncio.Lock()

    async def get(self, key: K, build: Callable[[], Awaitable[V]]) -> V:
        if key in self._values:
            return self._values[key]
        async with self._lock:
            if key not in self._values:
                self._values[key] = await build()
        return self._values[key]

    def __contains__(self, key: object) -> bool:
        return key in self._values


class TtlCache(Generic[K, V]):
    def __init__(self, ttl_s: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl_s = ttl_s
        self._clock = clock
        self._values: dict[K, tuple[float, V]] = {}

    def get(self, key: K) -> V | None:
        """The value stored for ``key`` if younger than ``ttl_s``, else None."""
        hit = self._values.get(key)
        if hit is None or self._clock() - hit[0] > self.ttl_s:
            return None
        return hit[1]

    def put(self, key: K, value: V) -> V:
        self._values[key] = (self._clock(), value)
        return value

    def forget(self, key: K | None = None) -> None:
        """Drop ``key``'s value (all values when None)."""
        if key is None:
            self._values.clear()
        else:
            self._values.pop(key, None)
