"""``RecallUnit``: one recall's work in the database, on one pooled connection.

A fast recall sends two statements, each alone and each scoping itself to the vault (``memvault._enter_vault_v1``,
with the vault this unit was made for: the one the request's key was verified for, never a value of the request):
the search (``recall_fast_v3``) and, once formatted, the log with its write-back (``record_recall_v2``). Each is
one implicit transaction, one send and one round trip; before round 3 of docs/recall-cpu.md they were six
statements of one pipelined transaction (BEGIN, the scope's ``set_config``, the search, the log, COMMIT), ~9.6
sends a recall. The reads need no transaction of their own: under READ COMMITTED each statement took its own
snapshot already, and the only write, the log, is one statement. Since round 4 the search is ``recall_fast_v5``
when the recall sent its sparse side ahead of the models (app/read/ahead.py: one statement on a checkout of its
own, before this unit takes its connection).

Any other database stage (the prefetch probe, SessionContinuity, hops, provenance, the vault size probe) opens a
vault transaction on the unit's connection (:meth:`conn`, pipelined: BEGIN, the scope and the first statement read
are one round trip), and while one is open the self-scoping statements run as their plain twins inside it
(:meth:`execute`). A stage that waits on a model (``calls_models``: a reranker, the funnel's LLM gate, CRAG) runs
with the unit closed (committed, the connection back in the pool), and the next database stage takes it again.
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from types import TracebackType
from typing import TYPE_CHECKING
from uuid import UUID

import psycopg

from app.db.connector import Database

if TYPE_CHECKING:
    from app.db.queries import Query


class UnitTransaction:
    """A database stage's ``ctx.conn``: the unit's vault transaction, opened by the first statement the stage sends
    (a stage that sends nothing, SessionContinuity among memories written without turns, opens none)."""

    __slots__ = ("unit",)

    def __init__(self, unit: RecallUnit) -> None:
        self.unit = unit

    async def execute(self, query: Query, params: tuple | dict | None = None) -> psycopg.AsyncCursor:
        return await (await self.unit.conn()).execute(query, params)


class RecallUnit:
    def __init__(self, db: Database, vault_id: UUID) -> None:
        self.db = db
        self.vault_id = vault_id
        self._stack: AsyncExitStack | None = None  # the pooled connection, and the transaction open on it
        self._session: psycopg.AsyncConnection | None = None
        self._txn: AsyncExitStack | None = None
        self._conn: psycopg.AsyncConnection | None = None  # set while a transaction is open
        self.opened = 0  # transactions this recall took (0 on the fast path; 1 more for each split)
        self.lazy = UnitTransaction(self)

    async def _connection(self) -> psycopg.AsyncConnection:
        if self._session is None:
            stack = AsyncExitStack()
            self._session = await stack.enter_async_context(self.db.session())
            self._stack = stack
        return self._session

    @property
    def current(self) -> psycopg.AsyncConnection | None:
        """The connection of the open transaction; None when none is open."""
        return self._conn

    async def conn(self) -> psycopg.AsyncConnection:
        """The unit's connection, in an open vault transaction (opened now if it is not)."""
        if self._conn is None:
            session = await self._connection()
            txn = AsyncExitStack()
            await txn.enter_async_context(self.db.pipelined(session, self.vault_id))
            self._txn, self._conn = txn, session
            self.opened += 1
        return self._conn

    async def execute(self, plain: Query, scoped: Query, params: tuple, *, extra: tuple = ()) -> psycopg.AsyncCursor:
        """One statement in the vault: ``plain`` in the open transaction if there is one, else ``scoped`` (the same
        function behind ``memvault._enter_vault_v1``, which takes the vault and the actor first: put there by
        :meth:`Database.scoped`, from this unit's vault) alone, in an implicit transaction, with ``extra``
        parameters after ``params`` (what only the scoped statement takes)."""
        if self._conn is not None:
            return await self._conn.execute(plain, params)
        return await self.db.scoped(await self._connection(), self.vault_id, scoped, (*params, *extra))

    async def close(self) -> None:
        """Commit what is open and give the connection back (before a model call, or at the end)."""
        await self.__aexit__(None, None, None)

    async def __aenter__(self) -> RecallUnit:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        txn, stack = self._txn, self._stack
        self._txn = self._conn = self._stack = self._session = None
        try:
            if txn is not None:
                await txn.__aexit__(kind, exc, tb)  # an error rolls the transaction back
        except BaseException as err:  # the transaction's error (its COMMIT failed), raised through the session
            if stack is None:
                raise
            if not await stack.__aexit__(type(err), err, err.__traceback__):
                raise
            return
        if stack is not None:
            await stack.__aexit__(kind, exc, tb)  # a driver error comes out translated (Database.session)
