"""`memvault db ...` and the provisioning API, against the real server; and docker/ kept consistent with both.

The shared server (brought up by the harness) is only looked at, never stopped: start/stop cycles, ports and
stale pid files are exercised on a second small cluster in its own data directory, which reuses the shared
server's root filesystem (MEMVAULT_ROOTFS_DIR) so that nothing is downloaded.
"""

from __future__ import annotations

import json
import os
import pwd
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import tomllib
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import pytest
import yaml

from app.cli import main
from app.db import cluster, rootfs
from app.db.provision import ensure_server, extension_problems, server_status, server_url, stop_server
from app.db.proclog import CommandLog
from app.db.rootfs import SUITE, postgres_packages
from app.errors import MissingExtension, ProvisionError
from app.settings import Settings

REPO = Path(__file__).resolve().parents[2]
DOCKER = REPO / "docker"
PG15 = Path("/usr/lib/postgresql/15/bin")


# --- fixtures -----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shared(test_settings: Settings, server_url: str) -> Settings:
    """Settings of the shared server, which the harness has brought up (`server_url`)."""
    return test_settings


@pytest.fixture(scope="module")
def embedded(shared: Settings) -> Settings:
    if shared.database_url:
        pytest.skip("MEMVAULT_DATABASE_URL is set: there is no embedded cluster to look at")
    return shared


@pytest.fixture
def second(embedded: Settings, tmp_path: Path) -> Iterator[Settings]:
    """Settings of a second embedded cluster in its own data directory, sharing the root filesystem."""
    settings = embedded.model_copy(
        update={"data_dir": tmp_path / "second", "db_port": 0, "rootfs_dir": server_status(embedded).rootfs}
    )
    yield settings
    status = server_status(settings)
    if status.running:
        stop_server(settings)
    if status.rootfs is not None and status.pgdata is not None:  # its directory inside the shared rootfs
        shutil.rmtree(status.pgdata.parent, ignore_errors=True)


@pytest.fixture
def pg15_url() -> Iterator[str]:
    """A PostgreSQL 15 of the host without pgvector or AGE (Debian 12 ships neither), on a free port."""
    if not (PG15 / "initdb").exists():
        pytest.skip("no PostgreSQL 15 on this host")
    as_user = {}
    if os.geteuid() == 0:
        try:
            entry = pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("no postgres user to run PostgreSQL 15 as")
        as_user = {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": []}
    data = Path(tempfile.mkdtemp(prefix="mv-pg15-"))
    if as_user:
        os.chown(data, as_user["user"], as_user["group"])
    port = cluster.free_port()
    run = dict(capture_output=True, cwd="/", **as_user)
    subprocess.run(
        [PG15 / "initdb", "-D", data / "pgdata", "-U", "postgres", "--auth=trust"], check=True, **run
    )
    subprocess.run(
        [
            PG15 / "pg_ctl",
            "-D",
            data / "pgdata",
            "-l",
            data / "log",
            "-w",
            "start",
            "-o",
            f"-p {port} -c listen_addresses=127.0.0.1 -k {data}",
        ],
        check=True,
        **run,
    )
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            [PG15 / "pg_ctl", "-D", data / "pgdata", "-m", "immediate", "-w", "stop"], check=False, **run
        )
        shutil.rmtree(data, ignore_errors=True)


def _extensions(url: str) -> dict[str, str]:
    with psycopg.connect(url) as conn:
        return dict(conn.execute("SELECT extname, extversion FROM pg_extension").fetchall())


# --- the shared server: looked at, not changed --------------------------------------------------------------


def test_db_url_prints_only_a_url_whose_database_has_both_extensions(embedded, capsys) -> None:
    assert main(["db", "url"]) == 0
    out = capsys.readouterr().out
    assert re.fullmatch(r"postgresql://postgres@127\.0\.0\.1:\d+/\w+\n", out), out
    extensions = _extensions(out.strip())
    assert extensions["vector"].startswith("0.8.") and extensions["age"].startswith("1.5."), extensions


def test_db_status_reports_server_and_extension_versions(shared, capsys) -> None:
    assert main(["db", "status"]) == 0
    out = capsys.readouterr().out
    assert ": running" in out
    assert re.search(r"server: +PostgreSQL 17\.\d+", out), out
    assert re.search(r"vector: +0\.8\.\d+", out) and re.search(r"age: +1\.5\.\d+", out), out


def test_second_db_up_changes_nothing(embedded) -> None:
    state = Path(embedded.data_dir) / "embedded.json"
    pid_file = server_status(embedded).pgdata / "postmaster.pid"
    before = (state.read_bytes(), state.stat().st_mtime_ns, pid_file.read_bytes())
    said: list[str] = []
    info = ensure_server(embedded, progress=said.append)
    assert not info.started and info.embedded and info.url == server_url(embedded)
    assert any("already running" in line for line in said), said
    assert (state.read_bytes(), state.stat().st_mtime_ns, pid_file.read_bytes()) == before


def test_db_psql_passes_its_arguments_to_psql(embedded) -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "app.cli",
            "db",
            "psql",
            "-tA",
            "-c",
            "SELECT extversion FROM pg_extension WHERE extname = 'age'",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    assert out.strip().startswith("1.5."), out


# --- errors that say what to do -----------------------------------------------------------------------------


def test_extension_problems_name_the_missing_or_old_one() -> None:
    assert extension_problems({"vector": "0.8.0", "age": "1.5.0"}) == []
    (problem,) = extension_problems({"vector": "0.8.1"})
    assert "age" in problem and "vector" not in problem
    (problem,) = extension_problems({"vector": "0.7.4", "age": "1.5.0"})
    assert "vector" in problem and "0.7.4" in problem


def test_external_server_without_the_extensions_is_one_clear_error(pg15_url, tmp_path) -> None:
    settings = Settings(database_url=pg15_url, data_dir=tmp_path / "untouched")
    with pytest.raises(MissingExtension) as err:
        ensure_server(settings)
    message = str(err.value)
    assert "vector" in message and "age" in message and "MEMVAULT_DATABASE_URL" in message
    assert server_status(settings).running and "lacks" in server_status(settings).note
    assert not stop_server(settings)
    assert not (tmp_path / "untouched").exists()  # no embedded cluster was touched


def test_neither_way_says_which_to_provide(monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.setattr(cluster, "find_host_postgres", lambda: None)
    with pytest.raises(ProvisionError) as err:
        ensure_server(Settings(database_url=None, data_dir=tmp_path))
    message = str(err.value)
    assert "MEMVAULT_DATABASE_URL" in message and "Linux" in message and "pgvector" in message


def test_without_root_the_prerequisites_are_checked_before_anything_is_downloaded(monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setattr(cluster, "find_host_postgres", lambda: None)
    monkeypatch.setattr(rootfs, "unpacked_problems", lambda: ["unshare is not installed (Debian/Ubuntu package "
                                                              "util-linux)"])
    with pytest.raises(ProvisionError) as err:
        ensure_server(Settings(database_url=None, data_dir=tmp_path))
    message = str(err.value)
    assert "without root" in message and "util-linux" in message and "MEMVAULT_DATABASE_URL" in message
    assert not (tmp_path / "rootfs").exists() and not list(tmp_path.glob(".rootfs.build-*"))
    assert not (tmp_path / ".apt").exists()  # nothing was downloaded


def test_db_status_without_a_cluster_says_so_plainly(monkeypatch, tmp_path, capsys) -> None:
    from app.settings import get_settings

    monkeypatch.delenv("MEMVAULT_DATABASE_URL", raising=False)
    monkeypatch.setenv("MEMVAULT_DATA_DIR", str(tmp_path / "nothing-here"))
    get_settings.cache_clear()
    try:
        assert main(["db", "status"]) == 3
    finally:
        get_settings.cache_clear()
    out = capsys.readouterr().out
    assert out.startswith(f"no embedded cluster in {tmp_path / 'nothing-here'} yet") and "memvault db up" in out
    assert "None" not in out


def test_another_users_data_directory_is_a_clear_error(monkeypatch, tmp_path) -> None:
    (tmp_path / "embedded.json").write_text("{}")
    real = Path.read_text

    def read_text(self, *args, **kwargs):  # root reads everything: the other user's file is simulated
        if self.name == "embedded.json":
            raise PermissionError(13, "Permission denied", str(self))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", read_text)
    with pytest.raises(ProvisionError) as err:
        ensure_server(Settings(database_url=None, data_dir=tmp_path))
    assert "belongs to another user" in str(err.value) and "MEMVAULT_DATA_DIR" in str(err.value)


def test_too_little_disk_space_is_a_clear_error_before_anything_is_built(monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(rootfs, "MIN_FREE_BYTES", 2**62)
    with pytest.raises(ProvisionError) as err:
        rootfs.ensure_rootfs(
            tmp_path / "rootfs", mirror="http://deb.debian.org/debian", log=CommandLog(tmp_path / "log")
        )
    assert "MB free" in str(err.value) and "MEMVAULT_DATA_DIR" in str(err.value)
    assert not (tmp_path / "rootfs").exists() and not list(tmp_path.glob(".rootfs.build-*"))


def test_a_taken_port_is_a_clear_error(second) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        with pytest.raises(ProvisionError) as err:
            ensure_server(second.model_copy(update={"db_port": port}))
    assert f"port {port}" in str(err.value) and "already in use" in str(err.value)
    assert "MEMVAULT_DB_PORT=" in str(err.value)
    assert server_status(second).mode is None  # nothing was set up


# --- a second cluster: start, stop, crash -------------------------------------------------------------------


def test_second_cluster_keeps_its_data_across_down_and_up(embedded, second) -> None:
    info = ensure_server(second)
    assert info.started and info.version.startswith("17.") and info.url != server_url(embedded)
    with psycopg.connect(info.url, autocommit=True) as conn:
        conn.execute("CREATE TABLE kept (x int)")
        conn.execute("INSERT INTO kept VALUES (7)")
        # memvault.conf's buffers: a quarter of this machine's memory (cluster.shared_buffers_mb), in 8 kB pages
        pages = conn.execute("SELECT setting::bigint FROM pg_settings WHERE name = 'shared_buffers'").fetchone()[0]
        assert pages * 8 // 1024 == cluster.shared_buffers_mb()
    assert stop_server(second)
    assert not server_status(second).running
    assert not stop_server(second)  # already stopped: nothing to do

    again = ensure_server(second)
    assert again.started and again.url == info.url  # the port chosen at first start is remembered
    with psycopg.connect(again.url) as conn:
        assert conn.execute("SELECT x FROM kept").fetchall() == [(7,)]


def test_db_up_with_another_database_name_keeps_the_default_state(second) -> None:
    info = ensure_server(second)
    state_file = Path(second.data_dir) / "embedded.json"
    other = ensure_server(second.model_copy(update={"db_name": "other_db"}))
    assert other.url.endswith("/other_db") and not other.started
    state = json.loads(state_file.read_text())
    assert set(state["databases"]) == {second.db_name, "other_db"} and "url" not in state
    assert server_url(second) == info.url  # the default database is still the one the state points at
    assert server_status(second).extensions == info.extensions


def test_a_stale_postmaster_pid_after_a_crash_is_cleared(second) -> None:
    info = ensure_server(second)
    assert stop_server(second)
    pid_file = server_status(second).pgdata / "postmaster.pid"
    impostor = subprocess.Popen(["sleep", "60"])  # a live process that is not postgres took the old pid
    try:
        pid_file.write_text(
            f"{impostor.pid}\n/srv\n{int(time.time())}\n{urlsplit(info.url).port}\n/tmp\n"
            "127.0.0.1\n  1  2\nready\n"
        )
        said: list[str] = []
        assert ensure_server(second, progress=said.append).started
        assert any("stale postmaster.pid" in line for line in said), said
    finally:
        impostor.kill()
        impostor.wait()


# --- docker/ and the embedded server stay consistent --------------------------------------------------------


def test_the_package_list_is_shared_by_the_image_and_the_embedded_server() -> None:
    assert postgres_packages() == ("postgresql-17", "postgresql-17-pgvector", "postgresql-17-age")
    canonical = (REPO / "app/db/postgres-packages.txt").read_bytes()
    assert (DOCKER / "postgres-packages.txt").read_bytes() == canonical, (
        "docker/ must hold a copy of the list"
    )
    dockerfile = (DOCKER / "db.Dockerfile").read_text()
    assert f"FROM debian:{SUITE}-slim" in dockerfile
    assert "COPY docker/postgres-packages.txt /tmp/postgres-packages.txt" in dockerfile
    assert "$(grep -v '^#' /tmp/postgres-packages.txt)" in dockerfile
    assert not any(name in dockerfile for name in postgres_packages()), "install from the list, not by name"
    assert f"/usr/lib/postgresql/{cluster.PG_MAJOR}/bin" in dockerfile


def test_the_package_list_ships_in_the_wheel() -> None:
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert "db/postgres-packages.txt" in pyproject["tool"]["setuptools"]["package-data"]["app"]


def test_compose_wires_the_images_with_the_settings_names() -> None:
    compose = yaml.safe_load((DOCKER / "compose.yaml").read_text())
    db, app = compose["services"]["db"], compose["services"]["app"]
    for service in (db, app):
        assert (REPO / service["build"]["dockerfile"]).exists() and service["build"]["context"] == ".."
    settings_env = {f"MEMVAULT_{name.upper()}" for name in Settings.model_fields}
    app_dockerfile = (DOCKER / "app.Dockerfile").read_text()
    image_env = set(re.findall(r"\b(MEMVAULT_[A-Z_]+)=", app_dockerfile))
    assert set(app["environment"]) | image_env <= settings_env, "every MEMVAULT_ variable must be a setting"

    url = urlsplit(app["environment"]["MEMVAULT_DATABASE_URL"])
    assert (url.hostname, url.port, url.path) == ("db", 5432, "/" + Settings.model_fields["db_name"].default)
    assert url.password == db["environment"]["POSTGRES_PASSWORD"] == "${POSTGRES_PASSWORD:-memvault}"
    assert db["environment"]["POSTGRES_DB"] == Settings.model_fields["db_name"].default
    assert "EXPOSE 5432" in (DOCKER / "db.Dockerfile").read_text()
    assert db["ports"] == ["127.0.0.1:5432:5432"]
    assert db["healthcheck"]["test"][:2] == ["CMD", "pg_isready"] and "memvault" in db["healthcheck"]["test"]
    assert app["depends_on"]["db"]["condition"] == "service_healthy"

    api_port = app["environment"]["MEMVAULT_PORT"]
    assert app["ports"] == [f"127.0.0.1:{api_port}:{api_port}"] and f"EXPOSE {api_port}" in app_dockerfile
    assert "FROM python:3.11-slim" in app_dockerfile and "memvault serve" in app_dockerfile
    for needed in ("app", "sql", "migrations"):  # app/db/migrate.py reads sql/ and migrations/ beside app/
        assert f"COPY {needed} ./{needed}" in app_dockerfile


def test_db_image_entrypoint_sets_up_password_auth_age_and_the_database(embedded) -> None:
    """The image's entrypoint, run for real inside the trixie root filesystem (same packages as the image)."""
    root = server_status(embedded).rootfs
    if root is None or os.geteuid() != 0:
        pytest.skip("needs the chroot runtime")
    rt = cluster.chroot_runtime(root, "/srv/memvault")
    work = f"/srv/memvault/entrypoint-test-{uuid.uuid4().hex[:8]}"
    rt.host(work).mkdir()
    os.chown(rt.host(work), rt.uid, rt.gid)
    shutil.copy(DOCKER / "db-entrypoint.sh", rt.host(work) / "entrypoint.sh")
    port = cluster.free_port()
    env = {
        "PATH": f"{cluster.DEBIAN_BINDIR}:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "PGDATA": f"{work}/data",
        "PGPORT": str(port),
        "POSTGRES_PASSWORD": "s3cret",
        "MEMVAULT_SERVICE_PASSWORD": "serv'ice pw",
    }
    server = None
    try:
        server = subprocess.Popen(
            [
                *rt.program("postgres")[:3],
                "/bin/sh",
                f"{work}/entrypoint.sh",
                "-c",
                "listen_addresses=127.0.0.1",
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # listen_addresses: loopback only, for the test
        url = f"postgresql://postgres:s3cret@127.0.0.1:{port}/memvault"
        deadline = time.monotonic() + 60
        while True:
            try:
                with psycopg.connect(url, connect_timeout=2) as conn:
                    preload = conn.execute("SHOW session_preload_libraries").fetchone()[0]
                    buffers = conn.execute("SHOW shared_buffers").fetchone()[0]
                    versions = dict(conn.execute("SELECT extname, extversion FROM pg_extension").fetchall())
                break
            except psycopg.OperationalError:
                assert server.poll() is None and time.monotonic() < deadline, "the entrypoint did not come up"
                time.sleep(0.3)
        assert preload == "age" and {"vector", "age"} <= set(versions)
        # a quarter of the container's memory, 128 MB to 8 GB; a chroot without /proc counts 2 GB (512 MB)
        mb = int(buffers[:-2]) * (1024 if buffers.endswith("GB") else 1)
        assert 128 <= mb <= 8192 and (mb == 512 or rt.host("/proc/meminfo").exists()), buffers
        with pytest.raises(psycopg.OperationalError, match="password"):
            psycopg.connect(url.replace(":s3cret", ":wrong"), connect_timeout=5)
        service = url.replace("postgres:s3cret@", "memvault_service:serv%27ice%20pw@")
        with psycopg.connect(service, connect_timeout=5) as conn:  # the service's login, an ordinary role
            assert conn.execute("SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user"
                                ).fetchone() == (False, False)
    finally:
        if server is not None:
            server.terminate()  # SIGTERM: smart shutdown; no clients are left
            server.wait(timeout=60)
        shutil.rmtree(rt.host(work), ignore_errors=True)
