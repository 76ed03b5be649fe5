"""Test harness: a real PostgreSQL 17 with pgvector and AGE, a migrated template, a fresh clone per test.

The server is the embedded one (`memvault db up`, started here if needed) or MEMVAULT_DATABASE_URL.
Nothing below the HTTP or SQL level is faked; model fakes are real HTTP servers on loopback.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import uuid
from pathlib import Path
from collections.abc import AsyncIterator, Iterator
from urllib.parse import urlsplit, urlunsplit

import pytest
from pytest_postgresql.janitor import DatabaseJanitor

from app.settings import Settings, get_settings

TEMPLATE_DB = f"memvault_tmpl_{os.getpid()}"
# Every database and throwaway cluster a run makes carries its pid, so the next run can tell what an interrupted
# one left behind (its pid is gone) from what a run going on beside it still uses.
CLUSTER_MARK = ".memvault-test-pid"


def _with_db(url: str, dbname: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{dbname}"))


def _janitor(base_url: str, dbname: str, **kw) -> DatabaseJanitor:
    parts = urlsplit(base_url)
    return DatabaseJanitor(user=parts.username or "postgres", host=parts.hostname or "127.0.0.1",
                           port=parts.port or 5432, password=parts.password, dbname=dbname,
                           **kw)


@pytest.fixture(scope="session")
def test_settings() -> Settings:
    """The offline defaults: USE embedder, heuristic LLM, no reranker, no second dense rail."""
    base = get_settings()
    return base.model_copy(update={"embedder": "use", "llm": "heuristic", "reranker": "none",
                                   "rail2_embedder": "none"})


@pytest.fixture(scope="session")
def server_url(test_settings: Settings, request) -> str:
    """URL of the server's maintenance database (the embedded server is provisioned and started here). What an
    interrupted run left on it (its template and test databases, its throwaway clusters) is removed first, and
    the run says so."""
    if test_settings.database_url:
        url = _with_db(test_settings.database_url, "postgres")
    else:
        from app.db.provision import ensure_server

        url = _with_db(ensure_server(test_settings).url, "postgres")
    removed = _remove_leftovers(url, test_settings)
    if removed:
        reporter = request.config.pluginmanager.get_plugin("terminalreporter")
        capture = request.config.pluginmanager.get_plugin("capturemanager")
        with capture.global_and_fixture_disabled() if capture else contextlib.nullcontext():
            line = f"removed what an interrupted test run left behind: {', '.join(removed)}"
            reporter.write_line(line) if reporter else print(line)
    return url


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_leftovers(url: str, settings: Settings) -> list[str]:
    import re
    import shutil

    import psycopg

    removed = []
    with psycopg.connect(url, autocommit=True) as conn:
        names = [r[0] for r in conn.execute("SELECT datname FROM pg_database WHERE datname ~ %s",
                                            (r"^(memvault_tmpl_[1-9]\d*$|mv_(test|empty)_[1-9]\d*_)",))]
        for name in names:
            pid = int(re.match(r"^\D+(\d+)", name).group(1))
            if pid == os.getpid() or _pid_alive(pid):
                continue
            conn.execute(f'ALTER DATABASE "{name}" WITH is_template = false')
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            removed.append(f"database {name}")
    if not settings.database_url:
        from app.db.provision import server_status, stop_server

        rootfs = server_status(settings).rootfs
        for mark in (rootfs / "srv/memvault/clusters").glob(f"*/{CLUSTER_MARK}") if rootfs else []:
            pid = int(mark.read_text().split()[0])
            if _pid_alive(pid):
                continue
            data_dir = Path(mark.read_text().split(maxsplit=1)[1].strip())
            try:
                stop_server(settings.model_copy(update={"data_dir": data_dir, "rootfs_dir": rootfs}))
            except Exception:  # noqa: BLE001 - its data directory went with its tmp_path: the pid file says
                pid_file = mark.parent / "pgdata" / "postmaster.pid"
                if pid_file.exists():
                    with contextlib.suppress(ProcessLookupError, ValueError):
                        os.kill(int(pid_file.read_text().split()[0]), 15)
            shutil.rmtree(mark.parent, ignore_errors=True)
            removed.append(f"cluster {mark.parent.name}")
    return removed


@pytest.fixture(scope="session")
def model_cache(test_settings: Settings) -> Iterator:
    """The offline models, loaded once for the session and handed to every test's services on purpose (a
    ``Services`` otherwise loads its own: ~1.3 s for the USE embedder). They share its breakers and model pool, as
    one service's requests do; a test that needs services of their own builds them without it."""
    from app.models.registry import ModelCache

    models = ModelCache(test_settings.model_threads)
    try:
        yield models
    finally:
        models.close()


@pytest.fixture(scope="session")
def template_db(server_url: str, test_settings: Settings, model_cache) -> Iterator[str]:
    """Migrated once per session, with the default embedder recorded (clones inherit the typed columns)."""
    import psycopg

    from app.db.migrate import upgrade

    janitor = _janitor(server_url, TEMPLATE_DB)
    janitor.init()
    url = _with_db(server_url, TEMPLATE_DB)
    try:
        upgrade(url)
        embedder = model_cache.embedder(test_settings)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("SELECT memvault.configure_embedder_v1(%s, %s)", (embedder.name, embedder.dim))
            conn.execute(f"ALTER DATABASE {TEMPLATE_DB} WITH is_template = true")
        yield TEMPLATE_DB
    finally:
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute(f"ALTER DATABASE {TEMPLATE_DB} WITH is_template = false")
        janitor.drop()


@pytest.fixture
def db_url(server_url: str, template_db: str) -> Iterator[str]:
    """A fresh clone of the migrated template for this test."""
    name = f"mv_test_{os.getpid()}_{uuid.uuid4().hex[:12]}"
    janitor = _janitor(server_url, name, template_dbname=template_db)
    janitor.init()
    try:
        yield _with_db(server_url, name)
    finally:
        janitor.drop()


def service_login(url: str, settings: Settings) -> str:
    """``url``'s database, logging in as the service's role (memvault_service), as the API and the worker do."""
    from app.db.connector import with_login
    from app.services import SERVICE_ROLE

    password = settings.service_db_password.get_secret_value() if settings.service_db_password else None
    return with_login(url, SERVICE_ROLE, password)


@pytest.fixture
def service_db_url(db_url: str, test_settings: Settings) -> str:
    """This test's database as the service logs in to it (``db_url`` is the owner's)."""
    return service_login(db_url, test_settings)


@pytest.fixture
def fresh_cluster(test_settings: Settings, server_url: str, tmp_path) -> Iterator[dict[str, str]]:
    """A brand-new embedded cluster, as a user's first `memvault db up` makes it: its own data directory, port and
    pgdata (initdb'd here, so no role or database of any earlier run exists in it), the shared server's cached root
    filesystem reused (MEMVAULT_ROOTFS_DIR) so that nothing is downloaded. Yields the environment of a ``memvault``
    process on it (offline models, no MEMVAULT_DATABASE_URL: the embedded path, as `make serve` takes it); the
    cluster is stopped and its directory removed afterwards."""
    import shutil

    from app.db.provision import server_status, stop_server

    if test_settings.database_url:
        pytest.skip("MEMVAULT_DATABASE_URL is set: no embedded cluster to start a brand-new one beside")
    rootfs = server_status(test_settings).rootfs
    env = {k: v for k, v in cli_env("").items() if k != "MEMVAULT_DATABASE_URL"}
    env.update(MEMVAULT_DATA_DIR=str(tmp_path / "data"), MEMVAULT_DB_PORT="0")
    if rootfs is not None:
        env["MEMVAULT_ROOTFS_DIR"] = str(rootfs)
    settings = test_settings.model_copy(update={"data_dir": tmp_path / "data", "db_port": 0, "rootfs_dir": rootfs})
    if rootfs is not None:  # where `db up` will put its pgdata (provision._runtime), tagged with this run's pid
        inner = rootfs / "srv/memvault/clusters" / hashlib.sha1(bytes((tmp_path / "data").absolute())).hexdigest()[:12]
        inner.mkdir(parents=True, exist_ok=True)
        (inner / CLUSTER_MARK).write_text(f"{os.getpid()} {tmp_path / 'data'}\n")
    try:
        yield env
    finally:
        status = server_status(settings)
        if status.running:
            stop_server(settings)
        if status.rootfs is not None and status.pgdata is not None:  # its directory inside the shared rootfs
            shutil.rmtree(status.pgdata.parent, ignore_errors=True)  # (a host-mode one lives in tmp_path)
        if rootfs is not None:
            shutil.rmtree(inner, ignore_errors=True)


@pytest.fixture
def empty_db_url(server_url: str) -> Iterator[str]:
    """An empty database (no schema), for migration tests."""
    name = f"mv_empty_{os.getpid()}_{uuid.uuid4().hex[:12]}"
    janitor = _janitor(server_url, name)
    janitor.init()
    try:
        yield _with_db(server_url, name)
    finally:
        janitor.drop()


@pytest.fixture
async def services(db_url: str, test_settings: Settings, model_cache) -> AsyncIterator:
    """The tracks as the CLI runs them, logged in as the tables' owner: tests set up and inspect through it (an
    unscoped read sees every vault). The API under test runs on ``api_services`` instead."""
    from app.services import Services

    svc = await Services.start(test_settings, url=db_url, model_cache=model_cache)
    try:
        yield svc
    finally:
        await svc.close()


@pytest.fixture
async def api_services(services, db_url: str, service_db_url: str, model_cache) -> AsyncIterator:
    """What `memvault serve` runs on: ``services``' settings, logged in as the service's role (memvault_service,
    no superuser, no BYPASSRLS, owner of nothing), the owner's login for index DDL only (``Database.ddl_url``)."""
    from app.services import Services

    # Litestar's test client runs the app in a thread of its own (an anyio portal), apart from the loop of the
    # pool's workers, so the pool cannot grow during a request there: open the connections a route may hold at
    # once (a dream: its lock's and its stage's) beforehand.
    settings = services.settings.model_copy(update={"pool_min_size": max(3, services.settings.pool_min_size)})
    svc = await Services.start(settings, url=service_db_url, ddl_url=db_url, model_cache=model_cache)
    try:
        yield svc
    finally:
        await svc.close()


@pytest.fixture(scope="session")
def _admin_key_material() -> tuple[str, str, str]:
    """One admin key for the session (argon2 hashed once; each test's database gets the same row)."""
    from app.auth import new_key

    return new_key()


@pytest.fixture
async def admin_key(services, _admin_key_material) -> str:
    """An admin key for every vault, in this test's database."""
    key_id, key, key_hash = _admin_key_material
    await services.db.fetchone("SELECT * FROM memvault.api_key_create_v1(%s, %s, 'admin', NULL, 'tests')",
                               (key_id, key_hash))
    return key


@pytest.fixture
async def client(api_services, admin_key) -> AsyncIterator:
    """The API as it is served (logged in as memvault_service), called with an admin key for every vault (tests
    about authentication build their own)."""
    from litestar.testing import AsyncTestClient

    from app.api.app import create_app

    app = create_app(api_services.settings, services=api_services)
    async with AsyncTestClient(app=app) as c:
        c.headers["Authorization"] = f"Bearer {admin_key}"
        yield c


@pytest.fixture
async def vault(services):
    from app.vaults import create_vault

    return await create_vault(services.db, "test-vault")


def cli_env(db_url: str) -> dict[str, str]:
    """The environment of a ``memvault`` process on the test's database with the offline defaults."""
    from pathlib import Path

    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    return {**env, "MEMVAULT_DATABASE_URL": db_url, "MEMVAULT_EMBEDDER": "use", "MEMVAULT_LLM": "heuristic",
            "MEMVAULT_RERANKER": "none", "MEMVAULT_RAIL2_EMBEDDER": "none",
            # a hook talks to the service there when one answers: none does (port 9), whatever runs on 8420
            "MEMVAULT_API_URL": "http://127.0.0.1:9",
            "PYTHONPATH": str(Path(__file__).resolve().parents[1])}


@pytest.fixture
def memvault_env(db_url: str, admin_key: str, monkeypatch) -> Iterator[None]:
    """``app.cli.main`` in this process, on the test's database (with an admin key for the commands that act
    with one: mcp, hook): the settings re-read from the environment."""
    for key, value in cli_env(db_url).items():
        if key.startswith("MEMVAULT_"):
            monkeypatch.setenv(key, value)
    monkeypatch.setenv("MEMVAULT_API_KEY", admin_key)
    get_settings.cache_clear()
    try:
        yield
    finally:
        get_settings.cache_clear()
