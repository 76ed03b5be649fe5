"""The bulk path's screening in a process of its own, so the writer's GIL serves the batch's decisions alone.

In one process, the next batches' gates (NoiseFilter, InjectionGuard's n-gram featurizer, the temporal normalizer:
pure Python) held the GIL in the model threads while the event loop decided the current batch in many short
GIL-releasing steps, each of which waited to get it back. :class:`ScreenProcess` runs :class:`app.write.screen.Screen`
(validate, normalize, embed, gates, token counts) in one spawned child instead: the child is given the settings
(plain data) and builds only what screening needs (the embedder, the normalizer, the gates; no database pool, no
LLM, no Services); each batch's items go over a pipe and the screened fields come back (numpy vectors, strings,
ItemResults: plain data). An error raised while screening (an empty item, a batch too large) comes back as the
same exception with the same message and hint; the child dies with :meth:`ScreenProcess.close`, which the bulk path
calls when its import ends or fails, and on its own when its parent is gone without closing it (killed, or stopped
by a signal whose default action skips Python's exit handlers: `kill -TERM` of `memvault import` or `bench ingest`).
A spawned child holds both ends of the pool's pipes, so it never sees them close; it watches its parent's pid
instead (:func:`_watch_parent`).

The child's one Screen is module state of the child process (set by the pool's initializer, used by each task): a
process-wide object by construction, owned by the ScreenProcess that spawned it.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from typing import Any

from app.settings import Settings
from app.write.items import WriteItem
from app.write.screen import SCREENED, Prepared, Screen
from app.write.timing import StageClock

_CHILD: Screen | None = None  # the child's Screen (only ever set inside a ScreenProcess's child)
# How often the child looks whether its parent is still there (a second: an orphan screens nothing meanwhile).
PARENT_POLL_S = 1.0


def _watch_parent(parent: int, every: float = PARENT_POLL_S) -> None:
    """Exit the process as soon as its parent is no longer ``parent`` (it died: the child was reparented)."""
    while os.getppid() == parent:
        time.sleep(every)
    os._exit(0)


def _start(settings: Settings, timed: bool) -> None:
    """The child's initializer: its parent watched, then the embedder and the gates, once."""
    global _CHILD
    from app.models.registry import build_embedder

    threading.Thread(target=_watch_parent, args=(os.getppid(),), name="watch-parent", daemon=True).start()
    _CHILD = Screen(settings, build_embedder(settings), clock=StageClock() if timed else None)


def _screen(items: list[WriteItem], max_items: int | None,
            read_verdict: bool) -> tuple[list[tuple[Any, ...]], dict[str, float]]:
    """One batch screened in the child: each item's screened fields (in SCREENED's order), and the stage seconds
    this batch took there (when timed)."""
    assert _CHILD is not None, "the screening process was not started"
    clock = _CHILD.clock
    before = dict(clock.seconds) if isinstance(clock, StageClock) else {}
    prepared = _CHILD(items, max_items=max_items, read_verdict=read_verdict)
    seconds = {k: v - before.get(k, 0.0) for k, v in clock.seconds.items()} if isinstance(clock, StageClock) else {}
    return [tuple(getattr(p, f) for f in SCREENED) for p in prepared], seconds


def rss_kb(pid: int) -> int | None:
    """Process ``pid``'s resident memory (VmRSS, kB); None when it is gone."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


class ScreenProcess:
    """One spawned process screening batches in the order they are sent. ``clock``: where the child's stage
    times are added (normalize, gates, embed), as the in-process screen adds them."""

    def __init__(self, settings: Settings, *, clock: StageClock | None = None) -> None:
        self.clock = clock
        self._pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                                         initializer=_start, initargs=(settings, clock is not None))
        self.pid: int | None = None
        self.rss_kb: int | None = None  # the child's resident memory, read before it is shut down

    async def screen(self, items: Sequence[WriteItem], *, max_items: int | None = None,
                     read_verdict: bool = True) -> list[Prepared]:
        items = list(items)
        loop = asyncio.get_running_loop()
        if self.pid is None:
            self.pid = await loop.run_in_executor(self._pool, os.getpid)
        rows, seconds = await loop.run_in_executor(self._pool, _screen, items, max_items, read_verdict)
        if self.clock is not None:
            for stage, s in seconds.items():
                self.clock.add(stage, s)
        return [replace(Prepared(i, item), **dict(zip(SCREENED, row, strict=True)))
                for i, (item, row) in enumerate(zip(items, rows, strict=True))]

    def close(self) -> None:
        """Stop the child (a batch it is screening is finished first, the ones queued behind it dropped) and wait
        for it to exit."""
        if self.pid is not None:
            self.rss_kb = rss_kb(self.pid)
        self._pool.shutdown(wait=True, cancel_futures=True)
