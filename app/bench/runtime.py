"""How the benchmarks reach a database: their own, ``memvault_bench``, on the configured server.

The server is the one the service uses (``MEMVAULT_DATABASE_URL``, or the embedded cluster, started if
needed); the benchmark database beside it is created if missing and migrated to head, and ``Services.start``
records the embedder in it. Benchmarks therefore never touch the user's memories, and each benchmark vault
is dropped when its run ends.
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TypeVar
from urllib.parse import urlsplit, urlunsplit

import app
from app.services import Services
from app.settings import Settings, get_settings
from app.vaults import Vault, create_vault, drop_vault

BENCH_DB = "memvault_bench"
EVAL_DIR = Path(app.__file__).resolve().parents[1].parent / "shared" / "eval"

T = TypeVar("T")


def with_database(url: str, dbname: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{dbname}"))


def ensure_bench_database(settings: Settings, dbname: str = BENCH_DB) -> str:
    """The benchmark database's URL: created on the configured server if missing, migrated to head."""
    import psycopg
    from psycopg import sql

    from app.db.migrate import upgrade
    from app.services import database_url

    base = database_url(settings)
    url = with_database(base, dbname)
    try:  # the benchmark database itself, else the server's maintenance database
        conn = psycopg.connect(url, autocommit=True)
    except psycopg.OperationalError:
        conn = psycopg.connect(with_database(base, "postgres"), autocommit=True)
    with conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (dbname,)).fetchone() is None:
            try:
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(dbname)))
            except psycopg.errors.DuplicateDatabase:
                pass  # created meanwhile by another benchmark
    upgrade(url)
    return url


@asynccontextmanager
async def bench_services(settings: Settings | None = None) -> AsyncIterator[Services]:
    settings = settings or get_settings()
    url = await asyncio.to_thread(ensure_bench_database, settings)
    services = await Services.start(settings, url=url)
    try:
        yield services
    finally:
        await services.close()


@asynccontextmanager
async def scratch_vault(services: Services, prefix: str) -> AsyncIterator[Vault]:
    """A fresh vault for one benchmark unit (a question, a conversation), dropped afterwards."""
    vault = await create_vault(services.db, f"{prefix}-{uuid.uuid4().hex[:12]}")
    try:
        yield vault
    finally:
        await drop_vault(services.db, vault.name)


def run_bench(core: Callable[[Services], Awaitable[T]], settings: Settings | None = None) -> T:
    """Start services on the benchmark database, run ``core`` with them, close them."""

    async def main() -> T:
        async with bench_services(settings) as services:
            return await core(services)

    return asyncio.run(main())


def write_json(path: str | Path | None, payload: dict) -> None:
    if not path:
        return
    import json

    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(payload, indent=2, sort_keys=False, default=str) + "\n", encoding="utf-8")
    print(f"wrote {p}", file=sys.stderr)


def progress(total: int, desc: str, unit: str = "it"):
    """A tqdm bar on stderr."""
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, dynamic_ncols=True, leave=False)
