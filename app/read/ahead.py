"""``SparseAhead``: a recall's sparse rail sent ahead of the models (rounds 4 and 6 of docs/recall-cpu.md).

The sparse side of fast search (``memvault._sparse_side_v1``: the rare-term plan, the rail's passes, its
pseudo-relevance feedback) reads the question's text (its focus), the times, and search keys that no model decides
(rail sizes from the recall's limit, the NoiseFilter's tags, the vault's size as ``services.vault_sizes`` holds
it). So a recall sends it as a statement of its own (``sparse_ahead_v1``, scoping itself to the recall's vault, the
one its key was verified for: :meth:`Database.scoped`) on a pooled connection of its own, as a task started before
the query embedding and the classifier: PostgreSQL runs it on one core while the process embeds and classifies
on the other. With it goes the recall's prefetch probe when the shortcut applies (``sparse_ahead_v2``, round 6):
the probe needs nothing a model decides either, and the recall's unit is then the search and the log only.
The search then sends the rankings back with the dense rail and the 11 stages (``recall_fast_v5``)
when they were asked for exactly what it would ask (:meth:`take` compares the whole request); else it runs the
sparse rail itself, as before (another noise list, a variant's query, a changed vault size).

No pooled connection waits on a model: the statement's connection goes back to the pool when its row is read,
and one that has not got a connection yet when the search needs it is cancelled and not used.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from app.db.connector import Database
from app.db.queries import Q

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class SparseRequest:
    """What the sparse side is asked for: the text its rail searches (the question's focus), the times, and the
    search keys as sent (JSON; the second rail's and the focus rail's vectors are not among them)."""

    query: str
    as_of: datetime | None
    known_at: datetime | None
    search: str


@dataclass(frozen=True, slots=True)
class SparseSide:
    """The statement's row: the rail's and the feedback pass's rankings, and the probe's answer if it went."""

    sparse: list[int] | None
    prf: list[int] | None
    probed: bool  # the prefetch probe went with it
    prefetch: dict[str, Any] | None  # prefetch_get_v1's row on a hit


class SparseAhead:
    """One recall's sparse side, sent ahead (with the prefetch probe for ``probe``, a query hash, when given):
    :meth:`start`, then :meth:`take` from the search (:meth:`probed` from the shortcut), :meth:`settle` at the end
    of the recall whatever happened."""

    __slots__ = ("probe", "request", "sent", "task")

    def __init__(self, request: SparseRequest, probe: bytes | None = None) -> None:
        self.request = request
        self.probe = probe
        self.sent = False  # the statement is on its way (it has a connection)
        self.task: asyncio.Task[SparseSide] | None = None

    @classmethod
    def start(cls, db: Database, vault_id: UUID, request: SparseRequest, probe: bytes | None = None) -> SparseAhead:
        ahead = cls(request, probe)
        ahead.task = asyncio.get_running_loop().create_task(ahead._run(db, vault_id))
        return ahead

    async def _run(self, db: Database, vault_id: UUID) -> SparseSide:
        r = self.request
        async with db.session() as conn:
            self.sent = True
            if self.probe is None:
                cur = await Database.scoped(conn, vault_id, Q.sparse_ahead, (r.query, r.as_of, r.known_at, r.search))
            else:
                cur = await Database.scoped(conn, vault_id, Q.sparse_ahead_probed,
                                            (r.query, r.as_of, r.known_at, r.search, self.probe))
            row = await cur.fetchone()
        probed = bool(row.get("probed"))
        hit = probed and row["created_at"] is not None
        prefetch = {k: row[k] for k in ("query", "payload", "confidence", "created_at")} if hit else None
        return SparseSide(row["sparse"], row["prf"], probed, prefetch)

    async def take(self, request: SparseRequest) -> tuple[list[int] | None, list[int] | None] | None:
        """The sparse side's rankings (the rail's, the feedback pass's) if they answer ``request`` exactly; None
        when they do not, or when the statement had no connection yet or failed (see :meth:`_result`)."""
        if self.task is None or request != self.request:
            return None
        side = await self._result()
        return None if side is None else (side.sparse, side.prf)

    async def probed(self, probe: bytes) -> tuple[dict[str, Any] | None] | None:
        """The prefetch probe's answer for ``probe``, as a 1-tuple (the row, None on a miss); None when it was
        not sent with the sparse side, or the statement had no connection yet or failed (the caller probes)."""
        if self.task is None or self.probe is None or probe != self.probe:
            return None
        side = await self._result()
        return None if side is None or not side.probed else (side.prefetch,)

    async def _result(self) -> SparseSide | None:
        """The statement's row; None when it had no connection yet (cancelled) or failed (logged: the search runs
        the rail itself, and meets the same error if it is the database's)."""
        assert self.task is not None
        if not self.task.done() and not self.sent:
            self.task.cancel()
            return None
        try:
            return await asyncio.shield(self.task)
        except asyncio.CancelledError:
            if self.task.cancelled():
                return None
            raise  # the recall itself is cancelled
        except Exception:  # noqa: BLE001 - the search runs the rail in its own statement instead
            log.warning("the sparse rail sent ahead failed; the search runs it itself", exc_info=True)
            return None

    async def settle(self) -> None:
        """Wait for the statement if it is on its way (its connection back in the pool), cancel it if it is not;
        its error, if any, is the search's to meet (``take``), not the recall's."""
        task = self.task
        if task is None:
            return
        if not task.done() and not self.sent:
            task.cancel()
        await asyncio.gather(task, return_exceptions=True)
