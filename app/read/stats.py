"""Counters of the read track, per vault: gate skips, breaker trips, blends, prefetch hits and misses.

One :class:`ReadCounters` is owned by each ``Services`` (``services.read_counters``), never by the module: two
services in one process (the tests, the bench, a standby's view apart) count apart, and the per-vault stats
route (``GET /v1/vaults/{vault}/recall/stats``) reports that vault's numbers, not the process's. The counts are
this process's since it started (an API runs one process per core: each counts what it served).
"""

from __future__ import annotations

import threading
from collections import Counter
from uuid import UUID


class ReadCounters:
    """Counts by vault and name. ``vault_id`` None: work that belongs to no vault (none today; kept apart)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # stages count from the loop, the recall log's writer from a task: both cheap
        self._by_vault: dict[UUID | None, Counter[str]] = {}

    def incr(self, vault_id: UUID | None, name: str, n: int = 1) -> None:
        with self._lock:
            self._by_vault.setdefault(vault_id, Counter())[name] += n

    def get(self, vault_id: UUID | None, name: str) -> int:
        with self._lock:
            counts = self._by_vault.get(vault_id)
            return counts[name] if counts is not None else 0

    def snapshot(self, vault_id: UUID | None) -> dict[str, int]:
        """One vault's counts, by name."""
        with self._lock:
            return dict(sorted((self._by_vault.get(vault_id) or Counter()).items()))

    def totals(self) -> dict[str, int]:
        """Every vault's counts added up (the process's view, for an operator)."""
        with self._lock:
            total: Counter[str] = Counter()
            for counts in self._by_vault.values():
                total.update(counts)
            return dict(sorted(total.items()))
