"""Wall time per write-track stage (normalize, gates, embed, dedup, persist, commit), so the next bottleneck is a
number. A :class:`StageClock` on a WriteTrack adds up what each stage cost; ``memvault bench ingest`` prints it.
Stages of the bulk path overlap (the next batch is screened in a thread while this one is decided and written), so
their sum can exceed the wall time."""

from __future__ import annotations

import threading
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from contextlib import contextmanager

STAGES = ("normalize", "gates", "embed", "dedup", "persist", "commit")


class StageClock:
    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: Counter[str] = Counter()
        self._lock = threading.Lock()

    def add(self, stage: str, seconds: float) -> None:
        with self._lock:
            self.seconds[stage] += seconds
            self.calls[stage] += 1

    @contextmanager
    def __call__(self, stage: str) -> Iterator[None]:
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.add(stage, time.perf_counter() - t0)


class _NoClock:
    """What a WriteTrack times with when nobody reads the times."""

    @contextmanager
    def __call__(self, stage: str) -> Iterator[None]:
        yield

    def add(self, stage: str, seconds: float) -> None:
        return None


NO_CLOCK = _NoClock()
