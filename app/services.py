"""The running service's shared objects: database pool, model clients and the built tracks, made once from
settings (``services.read``, ``services.write``, ``services.sessions`` are built on first use and reused)."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from app.db.connector import Database
from app.db.queries import Q
from app.models.base import LLM, Embedder, Reranker
from app.settings import Settings, get_settings

if TYPE_CHECKING:
    from app.read.recall import ReadTrack
    from app.write.pipeline import WriteTrack
    from app.write.sessions import SessionTrack


def database_url(settings: Settings) -> str:
    """The external URL, or the embedded server's (started if needed)."""
    if settings.database_url:
        return settings.database_url
    from app.db.provision import ensure_server

    return ensure_server(settings).url


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
    async def start(cls, settings: Settings | None = None, *, url: str | None = None) -> Services:
        """Open the pool and check that the database was embedded with the configured embedder."""
        from app.models.registry import get_embedder, get_llm, get_rail2_embedder, get_reranker

        settings = settings or get_settings()
        db = Database(url or database_url(settings), min_size=settings.pool_min_size,
                      max_size=settings.pool_max_size, timeout=settings.pool_timeout_s)
        await db.open()
        try:
            embedder = get_embedder(settings)
            await db.fetchone(Q.configure_embedder, (embedder.name, embedder.dim))
            return cls(settings=settings, db=db, embedder=embedder, llm=get_llm(settings),
                       reranker=get_reranker(settings), rail2=get_rail2_embedder(settings))
        except BaseException:
            await db.close()
            raise

    async def close(self) -> None:
        await self.db.close()
