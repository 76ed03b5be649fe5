"""``RecallUnit``: one recall's work in the database, as one vault transaction.

The prefetch probe, every database stage of the recipe and the recall log share one transaction of the vault,
opened when first needed (after the query is embedded and classified: no model call waits inside it). It runs in
psycopg's pipeline mode: a statement whose result is not read yet travels with the next one that is, so BEGIN, the
vault scope (``set_config``) and the probe are one round trip, the search one, the recall log and COMMIT one.
A stage that waits on a model (``calls_models``: a reranker, the funnel's LLM gate, CRAG) is run with the unit
closed (committed: a recall only reads until its log), and the next database stage opens it again.
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from types import TracebackType
from uuid import UUID

import psycopg

from app.db.connector import Database


class RecallUnit:
    def __init__(self, db: Database, vault_id: UUID) -> None:
        self.db = db
        self.vault_id = vault_id
        self._stack: AsyncExitStack | None = None
        self._conn: psycopg.AsyncConnection | None = None
        self.opened = 0  # transactions this recall took (1 unless a model stage split it)

    async def conn(self) -> psycopg.AsyncConnection:
        """The unit's connection, in its open transaction (opened now if it is not)."""
        if self._conn is None:
            stack = AsyncExitStack()
            self._conn = await stack.enter_async_context(self.db.transaction(self.vault_id, pipeline=True))
            self._stack = stack
            self.opened += 1
        return self._conn

    async def close(self) -> None:
        """Commit what is open (before a model call, or at the end)."""
        stack, self._stack, self._conn = self._stack, None, None
        if stack is not None:
            await stack.aclose()

    async def __aenter__(self) -> RecallUnit:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        stack, self._stack, self._conn = self._stack, None, None
        if stack is not None:
            await stack.__aexit__(kind, exc, tb)  # an error rolls the transaction back
