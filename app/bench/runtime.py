"""How the benchmarks reach a database: their own (``MEMVAULT_BENCH_DB``, ``memvault_bench`` by default), on the
configured server.

The server is the one the service uses (``MEMVAULT_DATABASE_URL``, or the embedded cluster, started if
needed); the benchmark database beside it is created if missing and migrated to head, and ``Services.start``
records the embedder in it. Benchmarks therefore never touch the user's memories, and each benchmark vault
is dropped when its run ends.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import TypeVar
from urllib.parse import urlsplit, urlunsplit

import app
from app.db.cluster import free_port
from app.db.connector import Database
from app.services import Services
from app.settings import BenchSettings, Settings, get_settings
from app.vaults import Vault, create_vault, drop_vault



def _eval_dir() -> Path:
    """``shared/eval`` beside the checkout (``../shared/eval``), or beside an ancestor of it: a git worktree kept
    under a folder of worktrees (``work/wt/<name>``) finds the same files as the main checkout beside them."""
    checkout = Path(app.__file__).resolve().parents[1]
    for folder in checkout.parents:
        if (folder / "shared" / "eval").is_dir():
            return folder / "shared" / "eval"
    return checkout.parent / "shared" / "eval"


EVAL_DIR = _eval_dir()

T = TypeVar("T")


def with_database(url: str, dbname: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{dbname}"))


def bench_settings() -> BenchSettings:
    """The benchmarks' knobs (``MEMVAULT_BENCH_DB``, ``MEMVAULT_BENCH_GRAPH``), read now: not the service's
    settings (app/settings.py, ``BenchSettings``)."""
    return BenchSettings()


def ensure_bench_database(settings: Settings, dbname: str | None = None) -> str:
    """The benchmark database's URL (``MEMVAULT_BENCH_DB`` by default) on the server ``settings`` name: created
    if missing, migrated to head."""
    import psycopg
    from psycopg import sql

    from app.db.migrate import upgrade
    from app.services import database_url

    dbname = dbname or bench_settings().bench_db
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
    # At head it re-applies the idempotent SQL files (this checkout's functions); the HNSW indexes of vaults past
    # the threshold are the benchmarks' own to build (a fill stopped midway builds its vault's once it is done).
    upgrade(url, ann_indexes=False)
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
async def _admin(services: Services) -> AsyncIterator[Database]:
    """A short-lived connection of its own for creating and dropping a vault's AGE graph.

    AGE 1.5 corrupts a backend's label cache once it holds a few dozen labels and a graph is dropped
    ("label (relation) cache corrupted", apache/age#2245, fixed after 1.5.0); a benchmark creates and drops
    a graph per question, so it does that on a fresh backend each time instead of on the pool's.
    """
    admin = Database(services.db.url, min_size=1, max_size=1)
    await admin.open()
    try:
        yield admin
    finally:
        await admin.close()


@asynccontextmanager
async def scratch_vault(services: Services, prefix: str) -> AsyncIterator[Vault]:
    """A fresh vault for one benchmark unit (a question, a conversation), dropped afterwards."""
    async with _admin(services) as admin:
        vault = await create_vault(admin, f"{prefix}-{uuid.uuid4().hex[:12]}")
    try:
        yield vault
    finally:
        await _drop(services, vault)


async def _drop(services: Services, vault: Vault, attempts: int = 3) -> None:
    """Drop a benchmark vault; a deadlock with a straggling write-back is retried, and a vault that still
    cannot be dropped is reported and left (named ``bench-...``) rather than losing the run's results."""
    from app.errors import MemvaultError

    await services.read.drain()  # recall's access-count write-backs still touching this vault's blocks
    for attempt in range(1, attempts + 1):
        try:
            async with _admin(services) as admin:
                await drop_vault(admin, vault.name)
            return
        except MemvaultError as exc:
            if attempt == attempts:
                print(f"bench: could not drop vault {vault.name} ({exc}); drop it later in the benchmark "
                      f"database: SELECT memvault.drop_vault_v1('{vault.id}')", file=sys.stderr)
                return
            await asyncio.sleep(0.5 * attempt)


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


def progress(total: int, desc: str, unit: str = "it", *, disable: bool = False):
    """A tqdm bar on stderr (``disable``: none)."""
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, dynamic_ncols=True, leave=False,
                disable=disable)


def conditions_note(*, graph: bool | None = None) -> str:
    """The table title's note of what differs from the defaults: the second dense rail's model
    (app/read/rail2.py), a graph built by the benchmark (``graph``; default ``MEMVAULT_BENCH_GRAPH``)."""
    settings = get_settings()
    graph = bench_settings().bench_graph if graph is None else graph
    note = f" · second rail: {settings.rail2_embedder}" if settings.rail2_embedder != "none" else ""
    return note + (" · graph built (bench_graph)" if graph else "")


@contextmanager
def serve_process(env: Mapping[str, str], log_path: Path, *options: str,
                  stop_s: float = 60) -> Iterator[tuple[subprocess.Popen, str]]:
    """``memvault serve`` on a free loopback port, in a process group of its own (the API processes and the job
    worker it starts are its children), its output in ``log_path``; yields the process and its base URL.

    On exit the group gets SIGTERM; a serve still running ``stop_s`` later is killed with SIGKILL and that is an
    error (it should stop on SIGTERM: systemd and docker stop it that way)."""
    port = free_port()
    with log_path.open("w") as log:
        server = subprocess.Popen([sys.executable, "-m", "app.cli", "serve", "--host", "127.0.0.1", "--port",
                                   str(port), *options], env=dict(env), stdout=log, stderr=subprocess.STDOUT,
                                  start_new_session=True)
        try:
            yield server, f"http://127.0.0.1:{port}"
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            try:
                server.wait(stop_s)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
                raise RuntimeError(f"memvault serve (pid {server.pid}) did not stop within {stop_s:.0f} s of "
                                   f"SIGTERM and was killed; see {log_path}") from None
