"""The running service's shared objects: database pool, model clients and the built tracks, made once from
settings (``services.read``, ``services.write``, ``services.sessions`` are built on first use and reused)."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from app.auth_limit import FailedAuthLimiter
from app.db.connector import Database
from app.db.queries import Q
from app.models.base import LLM, Embedder, Reranker
from app.models.calls import ModelCalls
from app.settings import Settings, get_settings

if TYPE_CHECKING:
    from app.read.recall import ReadTrack
    from app.write.pipeline import WriteTrack
    from app.write.sessions import SessionTrack


def database_url(settings: Settings) -> str:
    """The owner's URL (migrations, `memvault db`, the CLI): the external URL, or the embedded server's (started if
    needed). The API and the worker log in with :func:`service_url` instead."""
    if settings.database_url:
        return settings.database_url
    from app.db.provision import ensure_server

    return ensure_server(settings).url


SERVICE_ROLE = "memvault_service"


def service_url(settings: Settings, owner_url: str | None = None) -> str:
    """What the API and the worker log in with: ``MEMVAULT_SERVICE_DATABASE_URL``, or the owner's URL (external or
    embedded) with :data:`SERVICE_ROLE` as its user (sql/incremental/023-service-role.sql)."""
    if settings.service_database_url:
        return settings.service_database_url
    from app.db.connector import with_login

    password = settings.service_db_password.get_secret_value() if settings.service_db_password else None
    return with_login(owner_url or database_url(settings), SERVICE_ROLE, password)


class Services:
    """Not a dataclass on purpose: Litestar injects it as an opaque dependency."""

    def __init__(self, *, settings: Settings, db: Database, embedder: Embedder, llm: LLM,
                 reranker: Reranker | None, rail2: Embedder | None = None) -> None:
        self.settings = settings
        self.db = db
        self.embedder = embedder
        self.rail2 = rail2  # the second dense rail's model (app/read/rail2.py), None when off
        self.llm = llm
        self.reranker = reranker
        # The one async seam for blocking model work: a thread pool sized by settings (app/models/calls.py).
        self.models = ModelCalls(settings.model_threads)
        # failed API keys per key id and client address (app.auth_limit): the process's own count
        self.auth_attempts = FailedAuthLimiter(per_key=settings.auth_failures_per_key,
                                               per_address=settings.auth_failures_per_address,
                                               window_s=settings.auth_failure_window_s)

    @cached_property
    def judge_llm(self) -> LLM | None:
        """The dream's stronger conflict judge (settings ``dream_judge_llm``), None when not configured: built once
        per service like the other models, not once per dream."""
        from app.models.registry import get_judge_llm

        return get_judge_llm(self.settings)

    @cached_property
    def read(self) -> ReadTrack:
        """The read track, with the Slow Thinker's prefetch cache as its shortcut."""
        from app.read.prefetch import PrefetchCache
        from app.read.recall import ReadTrack

        return ReadTrack(self, shortcut=PrefetchCache(self))

    @cached_property
    def write(self) -> WriteTrack:
        from app.write.pipeline import WriteTrack

        return WriteTrack(self)

    @cached_property
    def sessions(self) -> SessionTrack:
        from app.write.sessions import SessionTrack

        return SessionTrack(self)

    @classmethod
    async def start(cls, settings: Settings | None = None, *, url: str | None = None,
                    ddl_url: str | None = None) -> Services:
        """Open the pool and check that the database was embedded with the configured embedder. ``url``: the
        login (default: the owner's, as the CLI acts); the service's is :func:`service_url`, with the owner's as
        ``ddl_url`` for the per-vault index DDL (``Database.ddl_url``)."""
        from app.models.registry import get_embedder, get_llm, get_rail2_embedder, get_reranker

        settings = settings or get_settings()
        db = Database(url or database_url(settings), min_size=settings.pool_min_size,
                      max_size=settings.pool_max_size, timeout=settings.pool_timeout_s, ddl_url=ddl_url)
        await db.open()
        try:
            embedder = get_embedder(settings)
            await db.fetchone(Q.configure_embedder, (embedder.name, embedder.dim))
            return cls(settings=settings, db=db, embedder=embedder, llm=get_llm(settings),
                       reranker=get_reranker(settings), rail2=get_rail2_embedder(settings))
        except BaseException:
            await db.close()
            raise

    @classmethod
    async def start_when_reachable(cls, settings: Settings | None = None, *, url: str | None = None,
                                   ddl_url: str | None = None) -> Services:
        """:meth:`start`, waiting out a database that does not answer yet (a restart, an outage): tried again
        after a pause doubling from ``worker_backoff_s`` to ``worker_backoff_max_s``. For the processes that
        ``memvault serve`` starts (an API process, the job worker), which must not die of a database restart."""
        import asyncio
        import logging
        import time

        from app.db.reachability import Backoff
        from app.errors import DatabaseUnavailable

        settings = settings or get_settings()
        pause = Backoff(settings.worker_backoff_s, settings.worker_backoff_max_s)
        while True:
            started = time.monotonic()
            try:
                return await cls.start(settings, url=url, ddl_url=ddl_url)
            except DatabaseUnavailable as exc:
                delay = pause.next(ran_for=time.monotonic() - started)
                logging.getLogger(__name__).warning("database unavailable (%s); trying again in %.1f s",
                                                    exc.message.splitlines()[0], delay)
                await asyncio.sleep(delay)

    async def close(self) -> None:
        if "read" in self.__dict__:  # recall's write-back (access counts) finishes before the pool goes
            await self.read.drain()
        await self.db.close()
        self.models.close()
