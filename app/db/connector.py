"""The only database boundary: one async psycopg pool, type adapters, vault scoping, error translation."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from contextvars import ContextVar
from typing import Any
from uuid import UUID

import psycopg
from pgvector.psycopg import register_vector_async
from psycopg import errors as pgerrors
from psycopg import pq
from psycopg.adapt import Loader
from psycopg.rows import dict_row
from psycopg.types import TypeInfo
from psycopg_pool import AsyncConnectionPool, PoolClosed, PoolTimeout

from app.db.reachability import Reachability, lost_server
from app.errors import (
    ConfigError,
    Conflict,
    DatabaseError,
    DatabaseUnavailable,
    InvalidInput,
    MemvaultError,
    NotFound,
    StaleWrite,
)

log = logging.getLogger(__name__)

# Who the current task acts for: "key:<id>" (set by the API's auth guard, MCP, hooks), "worker:<job>", "cli:<user>".
# Every transaction carries it as memvault.actor, which the audit triggers write into audit_log.
current_actor: ContextVar[str | None] = ContextVar("memvault_actor", default=None)


def act_as(actor: str) -> None:
    """Make ``actor`` the author of this task's transactions (and of the tasks it starts) from now on."""
    current_actor.set(actor)

# SQLSTATEs raised by memvault's own SQL functions.
_CUSTOM_SQLSTATES: dict[str, type[MemvaultError]] = {
    "MVEMB": ConfigError,
    "MV404": NotFound,
    "MV409": Conflict,
    "MV422": InvalidInput,
    "MVSTL": StaleWrite,
}


class AgtypeLoader(Loader):
    """Loads AGE's ``agtype`` with apache-age-python's parser (vertices, edges, paths, scalars)."""

    def load(self, data: Any) -> Any:
        from age.age import parseAgeValue

        return parseAgeValue(bytes(data).decode("utf-8"))


def as_array(value: Any):
    """A vector column's value as a float32 numpy array (None stays None)."""
    import numpy as np

    if value is None:
        return None
    if hasattr(value, "to_numpy"):
        value = value.to_numpy()
    return np.asarray(value, dtype=np.float32)


def translate(exc: Exception) -> MemvaultError:
    """Map a driver error to the application's hierarchy (the one place this happens). An error whose message
    is the server's own text (it may name tables, constraints, functions, hosts) is marked ``verbatim``: the CLI
    prints it, the API answers with its kind only (``app.api.errors``)."""
    if isinstance(exc, MemvaultError):
        return exc
    error = _translate(exc)
    error.verbatim = not (_is_nul(exc) or getattr(exc, "sqlstate", None) in _CUSTOM_SQLSTATES)
    return error


def _translate(exc: Exception) -> MemvaultError:
    if _is_nul(exc):
        return InvalidInput("the text contains a NUL character (\\u0000), which PostgreSQL cannot store",
                            hint="remove the NUL characters; the request was not stored")
    if isinstance(exc, pgerrors.SerializationFailure) and "recovery" in str(exc):
        # a hot standby cancelled the statement to replay the primary's WAL: a retry is served afresh
        return DatabaseUnavailable(f"a standby cancelled the read: {str(exc).strip()}",
                                   hint="retry; the next read may be served by another server")
    if isinstance(exc, psycopg.OperationalError) and not isinstance(exc, psycopg.errors.QueryCanceled):
        return DatabaseUnavailable(f"database unavailable: {exc}", hint="is the server up? try `memvault db status`")
    sqlstate = getattr(exc, "sqlstate", None)
    diag = getattr(exc, "diag", None)
    message = (diag.message_primary if diag is not None and diag.message_primary else str(exc)).strip()
    hint = diag.message_hint if diag is not None else None
    if sqlstate in _CUSTOM_SQLSTATES:
        return _CUSTOM_SQLSTATES[sqlstate](message, hint=hint)
    if isinstance(exc, pgerrors.UniqueViolation):
        return Conflict(message, hint=hint)
    if isinstance(exc, (pgerrors.CheckViolation, pgerrors.ForeignKeyViolation, pgerrors.NotNullViolation,
                        pgerrors.InvalidTextRepresentation, pgerrors.StringDataRightTruncation,
                        pgerrors.NumericValueOutOfRange, pgerrors.InvalidDatetimeFormat)):
        return InvalidInput(message, hint=hint)
    return DatabaseError(f"database error ({sqlstate}): {message}", hint=hint)


def _is_nul(exc: Exception) -> bool:
    """psycopg refuses a text parameter with NUL; PostgreSQL refuses \\u0000 in jsonb (SQLSTATE 22P05)."""
    if isinstance(exc, psycopg.DataError) and getattr(exc, "sqlstate", None) in (None, "22P05", "22021"):
        text = str(exc)
        return "NUL" in text or "\\u0000" in text or "0x00" in text
    return False


@contextmanager
def translated() -> Iterator[None]:
    try:
        yield
    except psycopg.Error as exc:
        raise translate(exc) from exc


@contextmanager
def sync_connection(url: str, **kwargs: Any) -> Iterator[psycopg.Connection]:
    """A synchronous connection for the CLI's long maintenance runs (reembed), with the pool's error translation:
    a driver error, on connecting or in the block, comes out as the application's typed error."""
    with translated(), psycopg.connect(url, **kwargs) as conn:
        yield conn


async def configure_connection(conn: psycopg.AsyncConnection) -> None:
    """Pool hook: AGE loaded, pgvector and agtype adapters registered once per connection.

    AGE is loaded by its first C function's call, which runs its ``_PG_init`` (the hooks ``cypher()`` needs): an
    agtype literal does it. ``LOAD 'age'`` would too, but only a superuser may run it, and the service's role is
    none (a server may also preload it: ``session_preload_libraries``)."""
    await conn.execute("SELECT 'null'::ag_catalog.agtype")
    await register_vector_async(conn)
    info = await TypeInfo.fetch(conn, "ag_catalog.agtype")
    if info is None:
        raise DatabaseError("type ag_catalog.agtype not found", hint="run `memvault migrate` (creates extension age)")
    conn.adapters.register_loader(info.oid, AgtypeLoader)
    await conn.commit()


# A vault transaction's first statement: row-level security's vault, the audit's actor, the vault role.
_SCOPE = ("SELECT set_config('memvault.vault_id', %s, true), set_config('memvault.actor', %s, true),"
          " set_config('role', 'memvault_app', true)")


class Database:
    """An async connection pool with vault-scoped transactions.

    ``transaction(vault_id)`` acts as the ``memvault_app`` role with ``memvault.vault_id`` set, so row-level
    security decides what the statements see. ``transaction()`` without a vault acts as the login role: for the
    API and the worker that is ``memvault_service`` (sql/incremental/023-service-role.sql), which sees no vault's
    rows and reaches across vaults only through the SECURITY DEFINER functions granted to it
    (sql/idempotent/990-service-role.sql); for migrations and the CLI, the tables' owner. Both set
    ``memvault.actor`` (``current_actor``) for the audit triggers.
    """

    def __init__(self, url: str, *, min_size: int = 1, max_size: int = 10, timeout: float = 30.0,
                 ddl_url: str | None = None, check: Any = None, name: str = "memvault") -> None:
        self.url = url
        # The tables' owner, for the one thing the service's role may not do: a vault's own HNSW index, built and
        # dropped CONCURRENTLY (app/db/ann_index.py), which takes the table's owner and cannot run inside a
        # SECURITY DEFINER function. A short autocommit connection runs the statement the owner's
        # memvault.ann_index_ddl_v2 writes; nothing else ever uses it. None: ``url`` (already the owner's).
        self.ddl_url = ddl_url or url
        self._closing = None  # the pool replaced after an outage, while it closes
        # check: e.g. AsyncConnectionPool.check_connection, a dropped connection found before use (the standbys')
        self._pool_options = {"min_size": min_size, "max_size": max_size, "timeout": timeout, "check": check,
                              "name": name}
        self.pool = self._new_pool()
        # A restart or an outage of the server: refused at once with 503 until a probe reaches it again, then
        # served by a new pool (the old one's reconnection attempts back off up to half a minute).
        self.reachability = Reachability(url, on_back=self._renew_pool)

    def _new_pool(self) -> AsyncConnectionPool:
        return AsyncConnectionPool(
            self.url,
            **self._pool_options,  # timeout: how long a request waits for a connection before it is a 503
            open=False,
            configure=configure_connection,
            kwargs={"row_factory": dict_row, "autocommit": False},
        )

    async def _renew_pool(self) -> None:
        """The server is back: new requests get a new pool, opened now; the old one, its connections dead with the
        server, closes once the requests it still serves (or makes wait) are done."""
        import asyncio

        new = self._new_pool()
        await new.open(wait=True, timeout=self.pool.timeout)  # its min_size connections made, then it serves
        old, self.pool = self.pool, new
        self._closing = asyncio.get_running_loop().create_task(old.close(timeout=old.timeout + 5))

    async def open(self) -> None:
        import asyncio

        self.reachability.loop = asyncio.get_running_loop()
        await self._reachable()
        try:
            await self.pool.open(wait=True, timeout=30)
        except psycopg.Error as exc:
            raise translate(exc) from exc
        except Exception as exc:  # psycopg_pool.PoolTimeout carries the connection error in its text
            raise DatabaseUnavailable(f"could not open a connection pool to {redact(self.url)}: {exc}",
                                      hint="check `memvault db status` or MEMVAULT_DATABASE_URL") from exc

    async def _reachable(self, seconds: int = 2) -> None:
        """One plain connection before the pool's: a server that is down, unreachable or refuses the login is one
        clear error within ``seconds``, not 30 s of the pool's retries and their log lines."""
        import asyncio

        try:
            conn = await asyncio.wait_for(psycopg.AsyncConnection.connect(self.url, connect_timeout=seconds),
                                          seconds + 1)
        except (psycopg.OperationalError, TimeoutError) as exc:
            why = next((line.strip() for line in str(exc).splitlines() if line.strip()), "") or "timed out"
            why = why.removeprefix("connection failed: ")
            raise DatabaseUnavailable(f"database unavailable: {redact(self.url)}: {why}",
                                      hint="is the server up? `memvault db status`, or check MEMVAULT_DATABASE_URL"
                                      ) from exc
        await conn.close()

    async def close(self) -> None:
        await self.reachability.close()
        await self.pool.close()
        if self._closing is not None:
            await self._closing

    async def __aenter__(self) -> Database:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @asynccontextmanager
    async def transaction(self, vault_id: UUID | None = None, *,
                          pipeline: bool = False) -> AsyncIterator[psycopg.AsyncConnection]:
        """A transaction on a pooled connection: ``vault_id``'s (row-level security, the vault role), or the login
        role's; either carries the actor (``current_actor``) for the audit. ``pipeline``: see :meth:`_pipelined`."""
        async with self._guarded():
            if pipeline:
                async with self.pool.connection() as conn:
                    async with self._pipelined(conn, vault_id):
                        yield conn
                return
            async with self._begun() as conn:
                if vault_id is not None:
                    await conn.execute(_SCOPE, (str(vault_id), current_actor.get() or ""))
                elif (actor := current_actor.get()) is not None:
                    await conn.execute("SELECT set_config('memvault.actor', %s, true)", (actor,))
                yield conn

    @asynccontextmanager
    async def session(self) -> AsyncIterator[psycopg.AsyncConnection]:
        """A pooled connection with no transaction open, lent for a few statements: each one either scopes itself
        (:meth:`scoped`, an implicit transaction) or runs in a vault transaction opened on it
        (:meth:`pipelined`). Errors are translated as :meth:`transaction`'s."""
        async with self._guarded(), self.pool.connection() as conn:
            try:
                yield conn
            finally:
                await Database.lend_back(conn)

    @staticmethod
    async def lend_back(conn: psycopg.AsyncConnection) -> None:
        """A :meth:`session`'s connection as the pool lends it, after statements that scoped themselves
        (:meth:`scoped` turned autocommit on): psycopg's own transactions back on. One that cannot be reset (a
        statement cut short by an error) is closed, and the pool discards it."""
        if not conn.closed and conn.autocommit:
            try:
                await conn.set_autocommit(False)
            except psycopg.Error:
                await conn.close()

    @staticmethod
    async def scoped(conn: psycopg.AsyncConnection, vault_id: UUID, query: str, params: tuple) -> psycopg.AsyncCursor:
        """``query``, a statement that enters its vault's scope itself (``memvault._enter_vault_v1``: row-level
        security's vault, the actor, the memvault_app role, local to its transaction), sent alone in an implicit
        transaction on ``conn`` (a :meth:`session`'s): one statement and one send instead of BEGIN, the scope and
        COMMIT. Its first two parameters are put here, as a vault transaction's scope is: ``vault_id`` (the vault
        the caller was given, verified against the request's key), then the actor (``current_actor``)."""
        if not conn.autocommit:
            await conn.set_autocommit(True)
        return await conn.execute(query, (str(vault_id), current_actor.get() or "", *params))

    def pipelined(self, conn: psycopg.AsyncConnection, vault_id: UUID):
        """A vault transaction on ``conn`` (a :meth:`session`'s), in pipeline mode (see :meth:`_pipelined`)."""
        return self._pipelined(conn, vault_id)

    @asynccontextmanager
    async def _guarded(self) -> AsyncIterator[None]:
        """The pool's connection, used: refused at once while the server is known to be down; a driver error
        translated (and a lost server noted); no connection within the pool's timeout a 503."""
        self.reachability.check()
        try:
            yield
        except psycopg.Error as exc:
            error = translate(exc)
            if lost_server(exc):
                self.reachability.failed(exc)
            raise error from exc
        except (PoolTimeout, PoolClosed) as exc:  # no connection (the server is down, every one is busy, or the
            # request waited on the pool an outage replaced)
            self.reachability.suspect()
            raise DatabaseUnavailable(f"no database connection within {self.pool.timeout:g} s: {exc}",
                                      hint="the database is unreachable or overloaded; retry shortly") from exc

    @staticmethod
    @asynccontextmanager
    async def _pipelined(conn: psycopg.AsyncConnection, vault_id: UUID | None) -> AsyncIterator[None]:
        """A transaction in psycopg's pipeline mode: a statement whose result is not read yet is sent with the next
        one that is. BEGIN and COMMIT are sent as statements of the pipeline (psycopg's own BEGIN waits for its
        answer), so BEGIN, the scope and the first query read are one round trip, and the statements after the
        last one read go with COMMIT (app/read/unit.py; ``fetchone``: one round trip in all). An error of a
        statement not read is raised where the next result is read, at the latest at COMMIT."""
        await conn.set_autocommit(True)  # client-side only: psycopg sends no BEGIN of its own; ours is in the pipeline
        # No server-side prepared statements here: one parsed in a pipeline an error aborted is never created, but
        # psycopg's cache (cleared by its own rollback(), not by our ROLLBACK statement) would name it later.
        threshold, conn.prepare_threshold = conn.prepare_threshold, None
        try:
            async with conn.pipeline():
                await conn.execute("BEGIN")
                if vault_id is not None:
                    await conn.execute(_SCOPE, (str(vault_id), current_actor.get() or ""))
                elif (actor := current_actor.get()) is not None:
                    await conn.execute("SELECT set_config('memvault.actor', %s, true)", (actor,))
                yield
                await conn.execute("COMMIT")
        except BaseException:
            # The error to report is this one: cleaning up after it must not replace it. A server restarting under
            # a pipeline can leave the connection busy, and psycopg then refused set_autocommit with a
            # ProgrammingError, which turned the restart's 503 into a 500. A connection that cannot be reset is
            # closed: the pool discards it.
            try:
                await Database._reset(conn, threshold)
            except psycopg.Error:
                await conn.close()
            raise
        await Database._reset(conn, threshold)

    @staticmethod
    async def _reset(conn: psycopg.AsyncConnection, threshold: int | None) -> None:
        """A pipelined transaction's connection as the pool lends it: no transaction open (a broken connection is
        UNKNOWN: the pool discards it), psycopg's own transactions and prepared statements back on."""
        if conn.pgconn.transaction_status in (pq.TransactionStatus.INTRANS, pq.TransactionStatus.INERROR):
            await conn.execute("ROLLBACK")
        conn.prepare_threshold = threshold
        if not conn.broken:
            await conn.set_autocommit(False)

    @asynccontextmanager
    async def _begun(self) -> AsyncIterator[psycopg.AsyncConnection]:
        """A pooled connection inside a transaction. A connection that fails its BEGIN, before anything of the
        caller ran, is closed (the pool drops it) and another one is tried, until the pool has given a fresh
        one: Apache AGE 1.5 can break an idle session while it catches up with another session's drop of a graph
        ("label (relation) cache corrupted", then "received 2 results from command 'BEGIN'"; apache/age issue
        2245, fixed in AGE 1.6)."""
        attempts = self.pool.max_size + 1  # every idle connection may be broken at once
        for attempt in range(attempts):
            async with AsyncExitStack() as stack:
                conn = await stack.enter_async_context(self.pool.connection())
                try:
                    await stack.enter_async_context(conn.transaction())
                except psycopg.Error:
                    if attempt == attempts - 1:
                        raise
                    await conn.close()
                    continue
                yield conn
            return  # also when the caller's body raised psycopg.Rollback, which the transaction swallows

    async def fetchall(self, query: str, params: Any = None, *, vault_id: UUID | None = None) -> list[dict]:
        """One statement in its own transaction, in one round trip (BEGIN, scope, the statement and COMMIT
        pipelined; its rows read once committed)."""
        async with self.transaction(vault_id, pipeline=True) as conn:
            cur = await conn.execute(query, params)
        return await cur.fetchall()

    async def fetchone(self, query: str, params: Any = None, *, vault_id: UUID | None = None) -> dict | None:
        """As :meth:`fetchall`, the first row."""
        async with self.transaction(vault_id, pipeline=True) as conn:
            cur = await conn.execute(query, params)
        return await cur.fetchone()


async def scope(conn: psycopg.AsyncConnection, vault_id: UUID | None) -> None:
    """The transaction's scope: a vault (as ``memvault_app``, row-level security on), or the login role; and its
    actor (``current_actor``) for the audit triggers."""
    if vault_id is not None:
        await conn.execute(
            "SELECT set_config('memvault.vault_id', %s, true), set_config('memvault.actor', %s, true),"
            " set_config('role', 'memvault_app', true)",
            (str(vault_id), current_actor.get() or ""),
        )
    elif (actor := current_actor.get()) is not None:
        await conn.execute("SELECT set_config('memvault.actor', %s, true)", (actor,))


def with_login(url: str, user: str, password: str | None = None) -> str:
    """``url`` (a ``postgresql://`` URL or a ``key=value`` conninfo) logging in as ``user`` (with ``password``, or
    none: the server trusts it, or a ``PGPASSFILE`` / ``.pgpass`` entry gives it)."""
    from urllib.parse import quote, urlsplit, urlunsplit

    if "://" not in url:
        params = {k: v for k, v in psycopg.conninfo.conninfo_to_dict(url).items() if k != "password"}
        return psycopg.conninfo.make_conninfo(**{**params, "user": user, "password": password})
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    login = quote(user, safe="") + (f":{quote(password, safe='')}" if password else "")
    return urlunsplit(parts._replace(netloc=f"{login}@{host}"))


def redact(url: str) -> str:
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.password:
        netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
        return urlunsplit(parts._replace(netloc=netloc))
    return url
