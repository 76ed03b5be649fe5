"""A recall's search sides sent ahead of its models: ``SparseAhead`` (round 4 of docs/recall-cpu.md) and
``DenseAhead`` (round 6).

The sparse side of fast search (``memvault._sparse_side_v1``: the rare-term plan, the rail's passes, its
pseudo-relevance feedback) reads the question's text (its focus), the times, and search keys that no model decides
(rail sizes from the recall's limit, the NoiseFilter's tags, the vault's size as ``services.vault_sizes`` holds
it). So a recall sends it as a statement of its own (``sparse_ahead_v1``, scoping itself to the recall's vault, the
one its key was verified for: :meth:`Database.scoped`) on a pooled connection of its own, as a task started before
the query embedding and the classifier: PostgreSQL runs it on one core while the process embeds and classifies
on the other. With it goes the recall's prefetch probe when the shortcut applies (``sparse_ahead_v2``): the probe
needs nothing a model decides either, and a recall that sends its dense side too stays within four round trips.

The dense side (``memvault._dense_side_v1``: the exact / index decision, HNSW at the vault's ef, the known_at
widening) needs the query's vector and the same search keys, nothing the classifier decides: the recall sends it
(``dense_ahead_v1``) as soon as the vector is there, while the process classifies, routes and reads the timeframe.

The search then sends the rankings back with RRF and the 11 stages (``recall_fast_v5``, or ``recall_fast_v7`` with
the dense ids too) when they were asked for exactly what it would ask (:meth:`Ahead.take` compares the whole
request); else it runs the rail itself, as before (another noise list, a variant's query, a changed vault size).

No pooled connection waits on a model: a statement's connection goes back to the pool when its row is read, and
one that has not got a connection yet when the search needs it is cancelled and not used.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar
from uuid import UUID

import numpy as np
import psycopg

from app.db.connector import Database
from app.db.queries import Q

log = logging.getLogger(__name__)

R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class SparseRequest:
    """What the sparse side is asked for: the text its rail searches (the question's focus), the times, and the
    search keys as sent (JSON; the second rail's and the focus rail's vectors are not among them)."""

    query: str
    as_of: datetime | None
    known_at: datetime | None
    search: str


@dataclass(frozen=True, slots=True, eq=False)
class DenseRequest:
    """What the dense side is asked for: the query's vector, the times and the search keys as sent (JSON; the
    same keys as the sparse side's: no second rail, no focus rail)."""

    qvec: np.ndarray
    as_of: datetime | None
    known_at: datetime | None
    search: str

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DenseRequest) and self.as_of == other.as_of and self.known_at == other.known_at \
            and self.search == other.search \
            and (self.qvec is other.qvec or np.array_equal(self.qvec, other.qvec))

    __hash__ = None  # type: ignore[assignment]


class Ahead(Generic[R]):
    """One recall's statement sent ahead: :meth:`start`, then :meth:`take` from the search, :meth:`settle` at the
    end of the recall whatever happened."""

    __slots__ = ("request", "sent", "task")
    what = "a search side"

    def __init__(self, request: Any) -> None:
        self.request = request
        self.sent = False  # the statement is on its way (it has a connection)
        self.task: asyncio.Task[R] | None = None

    def _start(self, db: Database, vault_id: UUID) -> None:
        self.task = asyncio.get_running_loop().create_task(self._run(db, vault_id))

    async def _run(self, db: Database, vault_id: UUID) -> R:
        async with db.session() as conn:
            self.sent = True
            return self._read(await (await self._send(conn, vault_id)).fetchone())

    async def sending(self, turns: int = 20) -> None:
        """Give the loop up to ``turns`` turns for the statement to take its pooled connection (an idle one is
        handed over in a few) and go, before the caller runs code that does not yield (the classifier): else the
        search would find it without a connection and cancel it."""
        for _ in range(turns):
            if self.sent or self.task is None or self.task.done():
                break
            await asyncio.sleep(0)

    async def _send(self, conn: psycopg.AsyncConnection, vault_id: UUID) -> psycopg.AsyncCursor:
        raise NotImplementedError

    def _read(self, row: dict[str, Any]) -> R:
        raise NotImplementedError

    async def _result(self) -> R | None:
        """The statement's result; None when it had no connection yet (cancelled) or failed (logged: the search
        runs the rail itself, and meets the same error if it is the database's)."""
        if self.task is None:
            return None
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
            log.warning("%s sent ahead failed; the search runs it itself", self.what, exc_info=True)
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


@dataclass(frozen=True, slots=True)
class SparseSide:
    sparse: list[int] | None
    prf: list[int] | None
    probed: bool  # the prefetch probe went with it
    prefetch: dict[str, Any] | None  # prefetch_get_v1's row on a hit


class SparseAhead(Ahead[SparseSide]):
    """The sparse side sent ahead, with the prefetch probe for ``probe`` (a query hash) when given."""

    __slots__ = ("probe",)
    what = "the sparse rail"

    def __init__(self, request: SparseRequest, probe: bytes | None = None) -> None:
        super().__init__(request)
        self.probe = probe

    @classmethod
    def start(cls, db: Database, vault_id: UUID, request: SparseRequest, probe: bytes | None = None) -> SparseAhead:
        ahead = cls(request, probe)
        ahead._start(db, vault_id)
        return ahead

    async def _send(self, conn: psycopg.AsyncConnection, vault_id: UUID) -> psycopg.AsyncCursor:
        r = self.request
        if self.probe is None:
            return await Database.scoped(conn, vault_id, Q.sparse_ahead, (r.query, r.as_of, r.known_at, r.search))
        return await Database.scoped(conn, vault_id, Q.sparse_ahead_probed,
                                     (r.query, r.as_of, r.known_at, r.search, self.probe))

    def _read(self, row: dict[str, Any]) -> SparseSide:
        probed = bool(row.get("probed"))
        hit = probed and row["created_at"] is not None
        prefetch = {k: row[k] for k in ("query", "payload", "confidence", "created_at")} if hit else None
        return SparseSide(row["sparse"], row["prf"], probed, prefetch)

    async def take(self, request: SparseRequest) -> tuple[list[int] | None, list[int] | None] | None:
        """The sparse side's rankings (the rail's, the feedback pass's) if they answer ``request`` exactly; None
        when they do not, or when the statement had no connection yet or failed."""
        if self.task is None or request != self.request:
            return None
        side = await self._result()
        return None if side is None else (side.sparse, side.prf)

    async def probed(self, probe: bytes) -> tuple[dict[str, Any] | None] | None:
        """The prefetch probe's answer for ``probe``, as a 1-tuple (the row, None on a miss); None when it was
        not sent with the sparse side, or the statement had no connection yet or failed (the caller probes)."""
        if self.probe is None or probe != self.probe:
            return None
        side = await self._result()
        return None if side is None or not side.probed else (side.prefetch,)


class DenseAhead(Ahead[list[int]]):
    """The dense side sent ahead (``dense_ahead_v1``): its ranked ids."""

    __slots__ = ()
    what = "the dense rail"

    @classmethod
    def start(cls, db: Database, vault_id: UUID, request: DenseRequest) -> DenseAhead:
        ahead = cls(request)
        ahead._start(db, vault_id)
        return ahead

    async def _send(self, conn: psycopg.AsyncConnection, vault_id: UUID) -> psycopg.AsyncCursor:
        r = self.request
        return await Database.scoped(conn, vault_id, Q.dense_ahead, (r.qvec, r.as_of, r.known_at, r.search))

    def _read(self, row: dict[str, Any]) -> list[int]:
        return list(row["dense"])

    async def take(self, request: DenseRequest) -> list[int] | None:
        """The dense rail's ranked ids if they answer ``request`` exactly; else None (see :meth:`Ahead._result`)."""
        if self.task is None or request != self.request:
            return None
        return await self._result()
