"""The recall log of recalls a standby served: their ``recall_log`` rows (and the returned memories' access counts)
go to the primary in batches, by one background task, so such a recall answers without waiting for the primary.

A row waits here at most until the batch before it is written; the service's close writes what is left. A batch
that fails is logged and counted, never retried into a request (as a lost access count is, app/read/recall.py).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any
from uuid import UUID

from app.db.connector import Database
from app.db.queries import Q

if TYPE_CHECKING:
    from app.read.stats import ReadCounters

log = logging.getLogger(__name__)


class RecallLogQueue:
    def __init__(self, db: Database, counters: ReadCounters, *, batch: int = 200, limit: int = 10_000) -> None:
        """Made on the event loop the primary's pool runs on: the batches are written there. ``counters``: the
        service's read counters (rows dropped, batched, failed: counted for the row's vault)."""
        self.db = db  # the primary
        self.counters = counters
        self.batch, self.limit = batch, limit
        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[tuple[UUID, tuple[Any, ...]]] = asyncio.Queue()
        self._task: asyncio.Task | None = None

    def put(self, vault_id: UUID, params: tuple[Any, ...]) -> None:
        """Queue one ``record_recall`` call (its parameters, writeback flag last); dropped and counted when the
        primary has fallen ``limit`` rows behind. From any thread: an ASGI test client serves requests on a loop
        of its own."""
        try:
            here = asyncio.get_running_loop()
        except RuntimeError:
            here = None
        if here is self._loop:
            self._put(vault_id, params)
        else:
            self._loop.call_soon_threadsafe(self._put, vault_id, params)

    def _put(self, vault_id: UUID, params: tuple[Any, ...]) -> None:
        if self._queue.qsize() >= self.limit:
            self.counters.incr(vault_id, "recall_log.dropped")
            return
        self._queue.put_nowait((vault_id, params))
        if self._task is None or self._task.done():
            self._task = self._loop.create_task(self._run(), name="memvault-recall-log")

    async def _run(self) -> None:
        while not self._queue.empty():
            rows = [self._queue.get_nowait() for _ in range(min(self.batch, self._queue.qsize()))]
            outcome: str | None = None  # cancelled: neither
            try:
                await self._write(rows)
                outcome = "recall_log.batched"
            except Exception:  # a lost log row must not fail anything; it is logged and counted
                log.exception("recall log batch of %d rows failed", len(rows))
                outcome = "recall_log.failed"
            finally:
                for vault_id, _ in rows:
                    if outcome is not None:
                        self.counters.incr(vault_id, outcome)
                    self._queue.task_done()

    async def _write(self, rows: list[tuple[UUID, tuple[Any, ...]]]) -> None:
        """One transaction per vault of the batch (row-level security scopes a transaction to one vault)."""
        by_vault: dict[UUID, list[tuple[Any, ...]]] = {}
        for vault_id, params in rows:
            by_vault.setdefault(vault_id, []).append(params)
        for vault_id, batch in by_vault.items():
            async with self.db.transaction(vault_id) as conn:
                async with conn.cursor() as cur:
                    await cur.executemany(Q.record_recall, batch)

    async def drain(self) -> None:
        """Wait until every row queued so far is written (or failed); on the loop the queue was made on."""
        await asyncio.sleep(0)  # rows handed over from another thread's loop land first
        await self._queue.join()
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)

    async def close(self) -> None:
        await self.drain()
