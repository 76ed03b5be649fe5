"""The composition root: the running service's shared objects, made once from settings and passed explicitly.

A ``Services`` owns every piece of state the process keeps between requests: the database pool, the model
clients with their breakers and thread pool (``model_cache``), the read counters, the caches (intent archetypes,
vault sizes; the read track's router keeps its vaults' habits), the failed-key limiter, the standbys and the
built tracks (``services.read``, ``services.write``, ``services.sessions``, built on first use and reused).
No module or class holds any of it (tests/unit/test_import_graph.py checks): two services in one process share
nothing unless handed it on purpose, and jobs receive the worker's services from the worker."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any
from uuid import UUID

from app.auth import VerifiedSecrets
from app.auth_limit import ClientAddress, FailedAuthLimiter
from app.caches import BuiltOnce, TtlCache
from app.db.connector import Database
from app.db.queries import Q
from app.models.base import LLM, Embedder, Reranker
from app.models.registry import ModelCache
from app.read.stats import ReadCounters
from app.settings import Settings, get_settings

if TYPE_CHECKING:
    from app.db.replicas import ReplicaSet
    from app.read.classify import ArchetypeIndex
    from app.read.writeback import RecallLogQueue
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


def service_replica_urls(settings: Settings) -> list[str]:
    """The standbys (``MEMVAULT_REPLICA_URLS``) as the API logs in to them: as :data:`SERVICE_ROLE`."""
    from app.db.connector import with_login

    password = settings.service_db_password.get_secret_value() if settings.service_db_password else None
    return [with_login(url, SERVICE_ROLE, password) for url in settings.replica_urls]


class Services:
    """Not a dataclass on purpose: Litestar injects it as an opaque dependency.

    With standbys (``replicas``), :meth:`for_reads` gives a read-only request the same services on a standby's
    pool (``db``) whose recall log goes to the primary in batches (``log_recall``); ``writer`` is always the
    primary's pool."""

    def __init__(self, *, settings: Settings, db: Database, embedder: Embedder, llm: LLM,
                 reranker: Reranker | None, rail2: Embedder | None = None,
                 model_cache: ModelCache | None = None) -> None:
        self.settings = settings
        self.db = db
        self.embedder = embedder
        self.rail2 = rail2  # the second dense rail's model (app/read/rail2.py), None when off
        self.llm = llm
        self.reranker = reranker
        # The clients built from settings, their backends' breakers and the thread pool of blocking model work
        # (app/models/registry.py); made here unless given (the clients above come from it, or a test's own).
        self._owns_models = model_cache is None
        self.model_cache = model_cache if model_cache is not None else ModelCache(settings.model_threads)
        # The one async seam for blocking model work: a thread pool sized by settings (app/models/calls.py).
        self.models = self.model_cache.calls
        self.breakers = self.model_cache.breakers
        # failed API keys per key id and client address (app.auth_limit): the process's own count
        self.auth_attempts = FailedAuthLimiter(per_key=settings.auth_failures_per_key,
                                               per_key_all=settings.auth_failures_per_key_all,
                                               per_address=settings.auth_failures_per_address,
                                               window_s=settings.auth_failure_window_s,
                                               known_for_s=settings.auth_known_address_s)
        # digests of secrets argon2 already verified (app.auth): the process's own, emptied for a revoked key
        self.verified_secrets = VerifiedSecrets()
        # a request's client address: its peer, or X-Forwarded-For behind a trusted proxy (app.auth_limit)
        self.client_address = ClientAddress(settings.trusted_proxies)
        self.read_counters = ReadCounters()  # per vault (app/read/stats.py; GET .../recall/stats)
        # the intent archetypes' vectors, per database URL and embedder (app/read/classify.py)
        self.archetypes: BuiltOnce[tuple[str, str], ArchetypeIndex] = BuiltOnce()
        # each vault's block count, probed at most once a minute (exact or ANN search: app/read/search.py)
        self.vault_sizes: TtlCache[UUID, int] = TtlCache(60.0)
        self.replicas: ReplicaSet | None = None  # the standbys that serve reads, None: the primary serves all
        self.primary: Services | None = None  # on a standby's view: the services of the primary
        self._views: dict[str, Services] = {}
        self._recall_log: RecallLogQueue | None = None

    @property
    def writer(self) -> Database:
        """The primary's pool: where writes go, also from a request a standby serves."""
        return self.primary.db if self.primary is not None else self.db

    async def log_recall(self, vault_id: UUID, params: tuple[Any, ...]) -> dict | None:
        """Write a recall's ``recall_log`` row (``Q.record_recall``'s parameters) and return it; on a standby's
        view, queue it for the primary's next batch and return None (the recall does not wait for the primary)."""
        if self.primary is not None:
            self.primary.recall_log_queue.put(vault_id, params)
            return None
        return await self.db.fetchone(Q.record_recall, params, vault_id=vault_id)

    @property
    def recall_log_queue(self) -> RecallLogQueue:
        assert self._recall_log is not None, "made with the standbys (Services.start)"
        return self._recall_log

    async def for_reads(self, lsn: str | None = None) -> Services:
        """The services a read-only request runs on: a healthy standby's that has replayed ``lsn`` (a write's
        ``X-Memvault-LSN``), else these (the primary's)."""
        if self.replicas is None:
            return self
        from app.db.replicas import parse_lsn

        standby = await self.replicas.choose(parse_lsn(lsn) if lsn else None)
        if standby is None:
            return self
        view = self._views.get(standby.url)
        if view is None:
            view = self._views[standby.url] = Services(
                settings=self.settings, db=standby, embedder=self.embedder, llm=self.llm, reranker=self.reranker,
                rail2=self.rail2, model_cache=self.model_cache)  # the primary's models, pool and breakers
            view.primary = self
            # the primary's counts and caches: a vault's numbers are one, whichever pool served its recall
            view.auth_attempts, view.verified_secrets = self.auth_attempts, self.verified_secrets
            view.read_counters, view.archetypes, view.vault_sizes = self.read_counters, self.archetypes, self.vault_sizes
        return view

    @cached_property
    def judge_llm(self) -> LLM | None:
        """The dream's stronger conflict judge (settings ``dream_judge_llm``), None when not configured: built once
        per service like the other models, not once per dream."""
        return self.model_cache.judge_llm(self.settings)

    @cached_property
    def read(self) -> ReadTrack:
        """The read track, with the Slow Thinker's prefetch cache as its shortcut."""
        from app.read.prefetch import PrefetchCache
        from app.read.recall import ReadTrack

        # the prefetch cache is an UNLOGGED table, which a standby cannot read: a standby's view goes without it
        return ReadTrack(self, shortcut=PrefetchCache(self) if self.primary is None else None)

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
                    ddl_url: str | None = None, replica_urls: list[str] | None = None,
                    model_cache: ModelCache | None = None, owns_models: bool | None = None) -> Services:
        """Open the pool and check that the database was embedded with the configured embedder. ``url``: the
        login (default: the owner's, as the CLI acts); the service's is :func:`service_url`, with the owner's as
        ``ddl_url`` for the per-vault index DDL (``Database.ddl_url``). ``replica_urls``: standbys that serve
        reads (the API passes :func:`service_replica_urls`; default none: the CLI reads from the primary).
        ``model_cache``: models already loaded (a process that loads them off its event loop first; the test
        suite's one cache); default: a cache of its own. ``owns_models``: close the cache with these services
        (default: only the cache made here)."""
        settings = settings or get_settings()
        db = Database(url or database_url(settings), min_size=settings.pool_min_size,
                      max_size=settings.pool_max_size, timeout=settings.pool_timeout_s, ddl_url=ddl_url)
        await db.open()
        owns_models = model_cache is None if owns_models is None else owns_models
        models = model_cache if model_cache is not None else ModelCache(settings.model_threads)
        try:
            embedder = models.embedder(settings)
            await db.fetchone(Q.configure_embedder, (embedder.name, embedder.dim))
            svc = cls(settings=settings, db=db, embedder=embedder, llm=models.llm(settings),
                      reranker=models.reranker(settings), rail2=models.rail2_embedder(settings), model_cache=models)
            svc._owns_models = owns_models
            if replica_urls:
                await svc._open_replicas(replica_urls)
            return svc
        except BaseException:
            await db.close()
            if owns_models:
                models.close()
            raise

    @classmethod
    async def start_when_reachable(cls, settings: Settings | None = None, *, url: str | None = None,
                                   ddl_url: str | None = None, replica_urls: list[str] | None = None) -> Services:
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
                return await cls.start(settings, url=url, ddl_url=ddl_url, replica_urls=replica_urls)
            except DatabaseUnavailable as exc:
                delay = pause.next(ran_for=time.monotonic() - started)
                logging.getLogger(__name__).warning("database unavailable (%s); trying again in %.1f s",
                                                    exc.message.splitlines()[0], delay)
                await asyncio.sleep(delay)

    async def _open_replicas(self, urls: list[str]) -> None:
        from app.db.replicas import ReplicaSet
        from app.read.classify import ArchetypeIndex
        from app.read.writeback import RecallLogQueue

        # a standby cannot write the intent archetypes' embeddings: the primary does, once, before any recall
        await ArchetypeIndex.load(self)
        self._recall_log = RecallLogQueue(self.db, self.read_counters)
        s = self.settings
        self.replicas = ReplicaSet.of(self.db, urls, max_lag_bytes=s.replica_max_lag_bytes,
                                      check_s=s.replica_check_s, timeout=s.replica_timeout_s, min_size=s.pool_min_size,
                                      max_size=s.pool_max_size)
        await self.replicas.open()

    async def close(self) -> None:
        if "read" in self.__dict__:  # recall's write-back (access counts) finishes before the pool goes
            await self.read.drain()
        for view in self._views.values():  # access counts of recalls the standbys served, still being written
            if "read" in view.__dict__:
                await view.read.drain()
        if self._recall_log is not None:
            await self._recall_log.close()
        if self.replicas is not None:
            await self.replicas.close()
        await self.db.close()
        if self._owns_models:
            self.model_cache.close()
