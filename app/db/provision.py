"""A PostgreSQL 17 server with pgvector and AGE, as DESIGN.md section 2 orders the ways to get one.

1. ``MEMVAULT_DATABASE_URL`` is set: that server is used as it is (only checked for both extensions).
2. Otherwise the embedded cluster under ``settings.data_dir``: run by a PostgreSQL 17 on the host if it has
   both extensions, else (Linux) inside a cached Debian trixie root filesystem: built by debootstrap and entered
   through ``chroot`` as root, or unpacked from the packages and entered through a user namespace without root
   (app/db/rootfs.py).
3. Neither: a :class:`ProvisionError` that says which of the two to provide.

Layout of the data directory::

    embedded.json             state: mode, port (chosen once), paths, versions, running/stopped
    embedded.lock             fcntl lock held while provisioning, starting or stopping
    logs/provision.log        output of every command run (debootstrap, apt-get, initdb, pg_ctl)
    rootfs/                   trixie + the packages of postgres-packages.txt (or a shared MEMVAULT_ROOTFS_DIR)
      srv/memvault/pgdata     the cluster (run/: its socket, log/postgres.log: its log)
    cluster/                  pgdata/, run/, log/ instead, when a host PostgreSQL 17 runs it

Auth on the embedded cluster is ``trust`` from 127.0.0.1 (it listens nowhere else): a development server.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from app.db import cluster
from app.db.proclog import CommandLog, Progress, file_lock, quiet
from app.db import rootfs as _rootfs
from app.db.rootfs import ensure_rootfs, postgres_packages, read_marker
from app.errors import DatabaseUnavailable, MissingExtension, ProvisionError
from app.settings import Settings

REQUIRED_EXTENSIONS = {"vector": (0, 8), "age": (1, 5)}
_NEITHER_HINT = (
    "either set MEMVAULT_DATABASE_URL to a PostgreSQL 17 server with pgvector >= 0.8 and AGE 1.5 "
    "(for example the image in docker/), or run `memvault db up` on Linux (it builds the server in a "
    "Debian trixie root filesystem, with or without root), or install postgresql-17, pgvector and age (Apache "
    "AGE) on this machine"
)
_SQL_EXTENSIONS = (
    "SELECT a.name, coalesce(e.extversion, a.default_version) FROM pg_available_extensions a "
    "LEFT JOIN pg_extension e ON e.extname = a.name WHERE a.name = ANY(%s)"
)
_SQL_HAS_DATABASE = "SELECT 1 FROM pg_database WHERE datname = %s"


@dataclass(frozen=True)
class ServerInfo:
    url: str
    embedded: bool
    mode: str  # "external", "chroot", "userns" or "host"
    version: str  # server version, e.g. "17.6"
    extensions: dict[str, str]  # name -> version (installed in the database, else the available default)
    started: bool = False  # this call started the server


@dataclass(frozen=True)
class Status:
    running: bool
    url: str | None
    embedded: bool
    mode: str | None  # None: no embedded cluster set up yet
    version: str | None = None
    extensions: dict[str, str] = field(default_factory=dict)
    pid: int | None = None
    pgdata: Path | None = None  # on this machine
    rootfs: Path | None = None  # the trixie root filesystem (modes "chroot" and "userns")
    note: str = ""


def ensure_server(settings: Settings, progress: Progress = quiet) -> ServerInfo:
    """Make sure the server is up with the database and both extensions; idempotent. Reports each step."""
    if settings.database_url:
        from app.db.external import prepare

        created = prepare(settings.database_url, required=tuple(REQUIRED_EXTENSIONS), progress=progress)
        version, extensions = check_server(settings.database_url)
        progress(f"external server (MEMVAULT_DATABASE_URL): PostgreSQL {version}, {_ext_text(extensions)}"
                 + (f"; created {', '.join(created)}" if created else ""))
        return ServerInfo(settings.database_url, False, "external", version, extensions)
    data_dir = _data_dir(settings)
    log = CommandLog(data_dir / "logs" / "provision.log")
    with file_lock(data_dir / "embedded.lock", progress):
        state = _load_state(data_dir)
        steps = _Steps(progress)
        rt = _runtime(settings, data_dir, state, steps, log)

        steps.begin("cluster")
        alive = cluster.running(rt)
        port = (
            alive[1]
            if alive
            else _free_port_or_fail(settings.db_port or state.get("port") or cluster.free_port())
        )
        cluster.prepare_dirs(rt)
        if cluster.initialized(rt):
            steps.done(f"exists ({rt.host(rt.pgdata)})")
        else:
            cluster.initdb(rt, log)
            steps.done(f"created ({rt.host(rt.pgdata)})")

        steps.begin("server")
        if alive:
            moved = (
                f"; MEMVAULT_DB_PORT={settings.db_port} applies after `memvault db down`"
                if (settings.db_port and settings.db_port != port)
                else ""
            )
            steps.done(f"already running on 127.0.0.1:{port} (pid {alive[0]}){moved}")
        else:
            stale = cluster.clear_stale_pid(rt)
            cluster.write_config(rt, port)
            _start(rt, log)
            steps.done(
                f"started on 127.0.0.1:{port}" + (" (removed a stale postmaster.pid)" if stale else "")
            )

        steps.begin(f"database {settings.db_name}")
        url = _url(port, settings.db_name)
        version, extensions, created = _ensure_database(rt, port, settings.db_name)
        steps.done(f"{'created, with' if created else 'ready:'} {_ext_text(extensions)}")

        # The cluster's state; what is per database (its extensions) under its name, so that `db up` with another
        # MEMVAULT_DB_NAME adds a database beside the default's instead of rewriting what the state says of it.
        new_state = {
            **{k: v for k, v in state.items() if k not in ("url", "extensions")},  # per-database keys of old
            "mode": rt.mode,
            "port": port,
            "cluster_dir": rt.cluster_dir,
            "bindir": rt.bindir,
            "rootfs": str(rt.root) if rt.root else None,
            "server_version": version,
            "databases": {**state.get("databases", {}), settings.db_name: {"extensions": extensions}},
            "state": "running",
        }
        new_state.setdefault("created_at", time.strftime("%Y-%m-%dT%H:%M:%S"))
        if new_state != state:
            _save_state(data_dir, new_state)
    return ServerInfo(url, True, rt.mode, version, extensions, started=not alive)


def server_url(settings: Settings) -> str:
    """The connection URL, without starting anything."""
    if settings.database_url:
        return settings.database_url
    data_dir = _data_dir(settings, create=False)
    state = _load_state(data_dir)
    if not state.get("port"):
        raise ProvisionError(
            f"there is no embedded PostgreSQL cluster in {data_dir} yet",
            hint="run `memvault db up` first (or set MEMVAULT_DATABASE_URL)",
        )
    alive = cluster.running(_runtime_from_state(state))
    return _url(alive[1] if alive else state["port"], settings.db_name)


def stop_server(settings: Settings, progress: Progress = quiet) -> bool:
    """Stop the embedded cluster cleanly (fast shutdown, waits). False if nothing was running."""
    if settings.database_url:
        progress("MEMVAULT_DATABASE_URL is set: that server is not managed by memvault; nothing to stop")
        return False
    data_dir = _data_dir(settings, create=False)
    if not (data_dir / "embedded.json").exists():
        progress(f"there is no embedded cluster in {data_dir}; nothing to stop")
        return False
    with file_lock(data_dir / "embedded.lock", progress):
        state = _load_state(data_dir)
        rt = _runtime_from_state(state) if state.get("mode") else None
        if rt is not None:
            _stop_standbys(rt, state, CommandLog(data_dir / "logs" / "provision.log"), progress)
        alive = cluster.running(rt) if rt else None
        if rt is None or alive is None:
            progress("embedded PostgreSQL is not running")
            return False
        if rt.mode == "chroot" and os.geteuid() != 0:
            raise ProvisionError(
                "stopping the embedded cluster needs root (it runs through chroot)",
                hint="run `sudo memvault db down`",
            )
        started = time.monotonic()
        cluster.stop(rt, CommandLog(data_dir / "logs" / "provision.log"))
        _save_state(data_dir, {**state, "state": "stopped"})
        progress(
            f"stopped PostgreSQL on 127.0.0.1:{alive[1]} (pid {alive[0]})"
            f" in {time.monotonic() - started:.1f} s"
        )
        return True


def _stop_standbys(rt: cluster.Runtime, state: dict, log: CommandLog, progress: Progress) -> None:
    """The standbys of the embedded cluster (app/db/standby.py) stop before it does."""
    for entry in state.get("standbys", []):
        srt = replace(rt, cluster_dir=entry["cluster_dir"])
        if cluster.running(srt) is not None:
            cluster.stop(srt, log)
            progress(f"stopped {entry['name']} (a standby, on 127.0.0.1:{entry['port']})")


def server_status(settings: Settings) -> Status:
    """Running or not, URL, server and extension versions. Starts nothing, changes nothing."""
    if settings.database_url:
        url = settings.database_url
        try:
            version, extensions = check_server(url)
        except MissingExtension as exc:
            return Status(True, url, False, "external", note=str(exc))
        except DatabaseUnavailable as exc:
            return Status(False, url, False, "external", note=str(exc))
        return Status(True, url, False, "external", version, extensions)
    data_dir = _data_dir(settings, create=False)
    state = _load_state(data_dir)
    if not state.get("mode"):
        return Status(
            False, None, True, None, note=f"no embedded cluster in {data_dir}: run `memvault db up`"
        )
    rt = _runtime_from_state(state)
    alive = cluster.running(rt)
    pgdata = rt.host(rt.pgdata)
    if alive is None:
        return Status(
            False,
            _url(state["port"], settings.db_name),
            True,
            rt.mode,
            state.get("server_version"),
            state.get("databases", {}).get(settings.db_name, {}).get("extensions", state.get("extensions", {})),
            pgdata=pgdata,
            rootfs=rt.root,
            note="stopped: `memvault db up` starts it",
        )
    import psycopg

    url = _url(alive[1], settings.db_name)
    try:
        version, extensions = _inspect(
            url if _has_database(alive[1], settings.db_name) else _url(alive[1], "postgres")
        )
    except (DatabaseUnavailable, psycopg.Error) as exc:  # starting up or shutting down: say so in the status
        return Status(
            True,
            url,
            True,
            rt.mode,
            pid=alive[0],
            pgdata=pgdata,
            rootfs=rt.root,
            note=f"not answering: {exc}",
        )
    return Status(True, url, True, rt.mode, version, extensions, pid=alive[0], pgdata=pgdata, rootfs=rt.root)


def check_server(url: str) -> tuple[str, dict[str, str]]:
    """Server version and extension versions at ``url``; MissingExtension if vector or age is unusable."""
    version, extensions = _inspect(url, external=True)
    problems = extension_problems(extensions)
    if problems:
        raise MissingExtension(
            f"the PostgreSQL server at {_redact(url)} lacks {' and '.join(problems)}",
            hint="install them on that server (Debian/Ubuntu: apt-get install postgresql-17-pgvector "
            "postgresql-17-age), use the image in docker/, or unset MEMVAULT_DATABASE_URL for the embedded "
            "server",
        )
    return version, extensions


def extension_problems(available: dict[str, str]) -> list[str]:
    """What is wrong with the server's extensions (one phrase per extension); empty when both are fine."""
    problems = []
    for name, minimum in REQUIRED_EXTENSIONS.items():
        need = ".".join(map(str, minimum))
        if name not in available:
            problems.append(f"the extension {name} (not available; need >= {need})")
        elif _version_tuple(available[name]) < minimum:
            problems.append(f"a recent {name} (has {available[name]}; need >= {need})")
    return problems


# --- the embedded cluster -----------------------------------------------------------------------------------


def _runtime(
    settings: Settings, data_dir: Path, state: dict, steps: _Steps, log: CommandLog
) -> cluster.Runtime:
    """Steps 1 and 2: the programs that will run the cluster (host PostgreSQL, or the trixie rootfs)."""
    steps.begin("root filesystem")
    host_bindir = state.get("bindir") if state.get("mode") == "host" else None
    if not state.get("mode"):
        host_bindir = cluster.find_host_postgres()
    if host_bindir:
        steps.done(f"not needed: PostgreSQL 17 with pgvector and AGE found in {host_bindir}")
        steps.begin("packages")
        steps.done("from the host")
        return cluster.host_runtime(host_bindir, str(data_dir / "cluster"))
    rootless = os.geteuid() != 0
    if state.get("mode") == "chroot" and rootless:
        raise ProvisionError(
            f"the embedded cluster in {data_dir} was set up by root and runs through chroot, which needs root",
            hint="run `sudo memvault db up`, or point MEMVAULT_DATA_DIR at a directory of your own (a cluster "
            "of yours is then set up there without root), or set MEMVAULT_DATABASE_URL",
        )
    if not sys.platform.startswith("linux"):
        raise ProvisionError(
            "no PostgreSQL 17 with pgvector and AGE was found, and the embedded one is built on Linux only",
            hint=_NEITHER_HINT,
        )
    root = Path(state["rootfs"]) if state.get("rootfs") else (settings.rootfs_dir or data_dir / "rootfs")
    root = root.expanduser().absolute()
    if rootless and read_marker(root) is None and (problems := _rootfs.unpacked_problems()):
        raise ProvisionError(  # before anything is downloaded
            "no PostgreSQL 17 with pgvector and AGE was found, and the embedded one cannot be set up without "
            "root here: " + "; ".join(problems),
            hint=_NEITHER_HINT,
        )
    done = ensure_rootfs(root, mirror=settings.debian_mirror, log=log, progress=steps.say, unpacked=rootless)
    steps.done(done + (" (without root: unpacked, run in a user namespace)" if rootless else ""))
    steps.begin("packages")
    steps.done(", ".join(f"{name} {ver}" for name, ver in _dpkg_versions(root, postgres_packages()).items()))
    own = root == (data_dir / "rootfs").absolute()
    cluster_dir = (
        "/srv/memvault" if own else f"/srv/memvault/clusters/{hashlib.sha1(bytes(data_dir)).hexdigest()[:12]}"
    )
    if rootless:
        return cluster.userns_runtime(root, state.get("cluster_dir") or cluster_dir)
    return cluster.chroot_runtime(root, state.get("cluster_dir") or cluster_dir)


def _runtime_from_state(state: dict) -> cluster.Runtime:
    if state.get("mode") == "host":
        return cluster.host_runtime(state["bindir"], state["cluster_dir"])
    if state.get("mode") == "userns":
        return cluster.userns_runtime(Path(state["rootfs"]), state["cluster_dir"])
    root = Path(state["rootfs"])
    if not (root / "etc/passwd").exists():  # the root filesystem is gone: paths only, nothing can run
        return cluster.Runtime("chroot", cluster.DEBIAN_BINDIR, state["cluster_dir"], root=root)
    return cluster.chroot_runtime(root, state["cluster_dir"])


def _free_port_or_fail(port: int) -> int:
    if cluster.port_free(port):
        return port
    raise ProvisionError(
        f"port {port} on 127.0.0.1 is already in use by another process, so the embedded PostgreSQL cannot "
        "listen on it",
        hint=f"stop that process, or choose another port, e.g. "
        f"MEMVAULT_DB_PORT={cluster.free_port()} memvault db up "
        "(the port used is remembered for later runs)",
    )


def _start(rt: cluster.Runtime, log: CommandLog) -> None:
    try:
        cluster.start(rt, log)
    except ProvisionError as exc:
        server_log = CommandLog(rt.host(rt.server_log))
        raise ProvisionError(
            f"{exc.message}\nLast lines of the server log {server_log.path}:\n{server_log.tail()}",
            hint=exc.hint,
        ) from exc


def _ensure_database(rt: cluster.Runtime, port: int, name: str) -> tuple[str, dict[str, str], bool]:
    """Create the database and both extensions in it if missing; return (version, extensions, created)."""
    import psycopg
    from psycopg import sql

    created = False
    try:
        if not _has_database(port, name):
            with psycopg.connect(_url(port, "postgres"), autocommit=True, connect_timeout=10) as conn:
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
            created = True
        with psycopg.connect(_url(port, name), autocommit=True, connect_timeout=10) as conn:
            installed = {row[0] for row in conn.execute("SELECT extname FROM pg_extension")}
            for ext in REQUIRED_EXTENSIONS:
                if ext not in installed:
                    conn.execute(sql.SQL("CREATE EXTENSION IF NOT EXISTS {}").format(sql.Identifier(ext)))
                    created = True
    except psycopg.Error as exc:
        server_log = CommandLog(rt.host(rt.server_log))
        raise ProvisionError(
            f"setting up the database {name} failed: {exc}\nLast lines of {server_log.path}:\n"
            f"{server_log.tail()}",
            hint="run `memvault db status`; `memvault db down` and `memvault db up` restart the server",
        ) from exc
    version, extensions = _inspect(_url(port, name))
    return version, extensions, created


def _has_database(port: int, name: str) -> bool:
    import psycopg

    with psycopg.connect(_url(port, "postgres"), connect_timeout=10) as conn:
        return conn.execute(_SQL_HAS_DATABASE, [name]).fetchone() is not None


# --- small helpers ------------------------------------------------------------------------------------------


class _Steps:
    """Prints ``[n/5] label: message (seconds)`` for each provisioning step."""

    def __init__(self, progress: Progress, total: int = 5) -> None:
        self.progress, self.total, self.n, self.label, self.t0 = progress, total, 0, "", time.monotonic()

    def begin(self, label: str) -> None:
        self.n, self.label, self.t0 = self.n + 1, label, time.monotonic()

    def say(self, message: str) -> None:
        self.progress(f"[{self.n}/{self.total}] {self.label}: {message}")

    def done(self, message: str) -> None:
        self.say(f"{message} ({time.monotonic() - self.t0:.1f} s)")


def _inspect(url: str, *, external: bool = False) -> tuple[str, dict[str, str]]:
    import psycopg

    try:
        with psycopg.connect(url, connect_timeout=10) as conn:
            version = str(conn.execute("SHOW server_version").fetchone()[0]).split()[0]
            rows = conn.execute(_SQL_EXTENSIONS, [list(REQUIRED_EXTENSIONS)]).fetchall()
    except psycopg.OperationalError as exc:
        where = "MEMVAULT_DATABASE_URL" if external else "the embedded server"
        raise DatabaseUnavailable(
            f"cannot connect to {where} ({_redact(url)}): {str(exc).strip()}",
            hint="check that the server is running and that host, port, user, password and "
            "database in the URL are right"
            if external
            else "run `memvault db up`",
        ) from exc
    return version, {name: ver for name, ver in sorted(rows)}


def _dpkg_versions(root: Path, packages: tuple[str, ...]) -> dict[str, str]:
    versions: dict[str, str] = dict((read_marker(root) or {}).get("versions", {}))  # an unpacked tree's
    status = root / "var/lib/dpkg/status"
    for block in (status.read_text(encoding="utf-8") if status.exists() else "").split("\n\n"):
        fields = dict(re.findall(r"^(Package|Version): (.+)$", block, re.MULTILINE))
        if fields.get("Package") in packages and "Version" in fields:
            versions[fields["Package"]] = fields["Version"]
    return {p: versions.get(p, "missing") for p in packages}


def _data_dir(settings: Settings, *, create: bool = True) -> Path:
    data_dir = settings.data_dir.expanduser().absolute()
    if not create:
        return data_dir
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ProvisionError(
            f"cannot create the data directory {data_dir}: {exc.strerror}",
            hint="set MEMVAULT_DATA_DIR to a directory you can write",
        ) from exc
    return data_dir


def _load_state(data_dir: Path) -> dict:
    try:
        return json.loads((data_dir / "embedded.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except PermissionError as exc:
        raise ProvisionError(
            f"cannot read {data_dir / 'embedded.json'}: the data directory {data_dir} belongs to another user",
            hint="set MEMVAULT_DATA_DIR to a directory of your own (`memvault db up` sets up a cluster there), "
            "or run as the user who owns it",
        ) from exc
    except ValueError as exc:
        raise ProvisionError(
            f"{data_dir / 'embedded.json'} is not valid JSON",
            hint="fix or delete it (it records the port and paths of the cluster)",
        ) from exc


def _save_state(data_dir: Path, state: dict) -> None:
    tmp = data_dir / "embedded.json.tmp"
    tmp.write_text(json.dumps(state, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(data_dir / "embedded.json")


def _url(port: int, db_name: str) -> str:
    return f"postgresql://postgres@127.0.0.1:{port}/{db_name}"


def _redact(url: str) -> str:
    url = re.sub(r"(://[^:/@]*:)[^@/]*@", r"\1***@", url)
    return re.sub(r"(password\s*=\s*)\S+", r"\1***", url)


def _ext_text(extensions: dict[str, str]) -> str:
    return (
        ", ".join(f"{name} {ver}" for name, ver in sorted(extensions.items(), reverse=True))
        or "no extensions"
    )


def _version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version)[:3])
