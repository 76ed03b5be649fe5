"""One private PostgreSQL 17 cluster on 127.0.0.1: where it runs, initdb, configuration, start, stop.

A :class:`Runtime` says how to run the server's programs: inside the trixie root filesystem through ``chroot``
as its ``postgres`` user (root), inside an unpacked one through a user namespace that maps the invoking user to
the tree's ``postgres`` user (no root: mode "userns"), or directly with a PostgreSQL 17 installed on the host. Paths the server sees (its
data directory, socket directory, log) are "inner" paths; ``Runtime.host`` maps them to paths on this machine.

Authentication is ``trust`` for connections from 127.0.0.1 (and the socket inside the cluster's directory):
this is a development cluster, reachable only from this machine. Use the image in ``docker/`` (scram-sha-256)
or any server of your own through ``MEMVAULT_DATABASE_URL`` for anything else.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

from app.db.proclog import CommandLog
from app.db.rootfs import chroot_env, userns_prefix
from app.errors import ProvisionError

PG_MAJOR = "17"
DEBIAN_BINDIR = f"/usr/lib/postgresql/{PG_MAJOR}/bin"
REQUIRED_CONTROLS = ("vector.control", "age.control")


def shared_buffers_mb(total_bytes: int | None = None) -> int:
    """A quarter of the machine's memory (PostgreSQL's own starting advice), at least 128 MB and at most 8 GB.
    The buffers are reserved, not touched: the server's memory grows into them as pages are read. At a million
    memories the vault's HNSW index is 2.6 GB: with 512 MB of buffers each search re-read ~6,400 index pages from
    the OS cache, and fast recall p95 was 46-50 ms; with 4 GB, 39-42 ms (docs/benchmarks.md)."""
    if total_bytes is None:
        try:
            total_bytes = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError):
            total_bytes = 2 << 30
    return max(128, min(8192, total_bytes // 4 // (1 << 20)))


# For a 2-core / 24 GB machine, fine on smaller ones. Tests clone many databases; HNSW builds want memory.
SERVER_CONFIG = {
    "listen_addresses": "'127.0.0.1'",
    "session_preload_libraries": "'age'",
    "max_connections": "200",
    "shared_buffers": f"'{shared_buffers_mb()}MB'",
    "work_mem": "'16MB'",
    "maintenance_work_mem": "'1GB'",
    "effective_cache_size": "'8GB'",
    "max_parallel_maintenance_workers": "2",
    "max_wal_size": "'4GB'",
    "timezone": "'UTC'",
}
_CONF_NAME = "memvault.conf"


@dataclass(frozen=True)
class Runtime:
    mode: str  # "chroot", "userns" or "host"
    bindir: str  # as the server sees it
    cluster_dir: str  # as the server sees it; holds pgdata/, run/ (sockets), log/
    root: Path | None = None  # the root filesystem, in modes "chroot" and "userns"
    uid: int | None = None  # the server's user; None: the current user
    gid: int | None = None

    def host(self, inner: str) -> Path:
        return self.root / inner.lstrip("/") if self.root is not None else Path(inner)

    @property
    def pgdata(self) -> str:
        return f"{self.cluster_dir}/pgdata"

    @property
    def socket_dir(self) -> str:
        return f"{self.cluster_dir}/run"

    @property
    def server_log(self) -> str:
        return f"{self.cluster_dir}/log/postgres.log"

    def program(self, name: str) -> list[str]:
        """argv prefix that runs the server program ``name`` as the server's user."""
        if self.mode == "chroot":
            chroot = shutil.which("chroot") or "/usr/sbin/chroot"
            return [chroot, f"--userspec={self.uid}:{self.gid}", str(self.root), f"{self.bindir}/{name}"]
        if self.mode == "userns" and self.root is not None:
            return [*userns_prefix(self.root), f"{self.bindir}/{name}"]
        return [f"{self.bindir}/{name}"]

    def run(
        self, log: CommandLog, argv: list[str], *, what: str, hint: str, new_session: bool = False
    ) -> None:
        """Run the server program ``argv[0]`` (with its arguments) as the server's user."""
        if self.mode in ("chroot", "userns"):  # chroot switches user; the namespace maps this one to postgres
            env, user, group = chroot_env(home="/var/lib/postgresql"), None, None
        else:
            env, user, group = dict(os.environ, LC_ALL="C.UTF-8", LANG="C.UTF-8"), self.uid, self.gid
        argv = [*self.program(argv[0]), *argv[1:]]
        log.run(argv, env=env, what=what, hint=hint, user=user, group=group, new_session=new_session)


def chroot_runtime(root: Path, cluster_dir: str) -> Runtime:
    uid, gid = _passwd_ids(root / "etc/passwd", "postgres")
    return Runtime("chroot", DEBIAN_BINDIR, cluster_dir, root=root, uid=uid, gid=gid)


def client_argv(mode: str | None, root: Path | None, program: str) -> list[str] | None:
    """argv prefix that runs the client ``program`` (psql, pg_dump, pg_restore) of the embedded cluster's root
    filesystem, for a host without PostgreSQL 17 clients; None when the cluster has no root filesystem."""
    if root is None or mode not in ("chroot", "userns"):
        return None
    if mode == "userns":
        return [*userns_prefix(root), f"{DEBIAN_BINDIR}/{program}"]
    return [shutil.which("chroot") or "/usr/sbin/chroot", str(root), f"{DEBIAN_BINDIR}/{program}"]


def userns_runtime(root: Path, cluster_dir: str) -> Runtime:
    return Runtime("userns", DEBIAN_BINDIR, cluster_dir, root=root)


def host_runtime(bindir: str, cluster_dir: str) -> Runtime:
    if os.geteuid() != 0:
        return Runtime("host", bindir, cluster_dir)
    uid, gid = _passwd_ids(Path("/etc/passwd"), "postgres")  # the server refuses to run as root
    return Runtime("host", bindir, cluster_dir, uid=uid, gid=gid)


def find_host_postgres() -> str | None:
    """The bin directory of a PostgreSQL 17 on this machine that has both extensions, if there is one."""
    candidates = [(DEBIAN_BINDIR, f"/usr/share/postgresql/{PG_MAJOR}"), (f"/usr/pgsql-{PG_MAJOR}/bin", None)]
    for pg_config in (
        shutil.which("pg_config"),
        f"/opt/homebrew/opt/postgresql@{PG_MAJOR}/bin/pg_config",
        f"/usr/local/opt/postgresql@{PG_MAJOR}/bin/pg_config",
    ):
        if pg_config and os.access(pg_config, os.X_OK):
            out = subprocess.run(
                [pg_config, "--version", "--bindir", "--sharedir"],
                capture_output=True,
                text=True,
                check=False,
            ).stdout.split("\n")
            if len(out) >= 3 and out[0].startswith(f"PostgreSQL {PG_MAJOR}."):
                candidates.append((out[1].strip(), out[2].strip()))
    for bindir, sharedir in candidates:
        ext = Path(sharedir or Path(bindir).parent / "share") / "extension"
        if Path(bindir, "postgres").exists() and all((ext / c).exists() for c in REQUIRED_CONTROLS):
            return bindir
    return None


def prepare_dirs(rt: Runtime) -> None:
    for inner in (rt.cluster_dir, rt.socket_dir, os.path.dirname(rt.server_log)):
        path = rt.host(inner)
        path.mkdir(parents=True, exist_ok=True)
        if rt.uid is not None:
            os.chown(path, rt.uid, rt.gid if rt.gid is not None else -1)
    if rt.mode == "host" and rt.uid is not None:  # root runs the server as 'postgres': can it reach the data?
        probe = subprocess.run(
            ["test", "-w", str(rt.host(rt.cluster_dir))],
            user=rt.uid,
            group=rt.gid,
            extra_groups=[],
            check=False,
        )
        if probe.returncode != 0:
            raise ProvisionError(
                f"the postgres user cannot write {rt.host(rt.cluster_dir)}",
                hint="set MEMVAULT_DATA_DIR to a directory the postgres user can reach "
                "(e.g. /var/lib/memvault), or run memvault as an ordinary user",
            )


def initialized(rt: Runtime) -> bool:
    data = rt.host(rt.pgdata)
    return (data / "PG_VERSION").exists() and (data / "global" / "pg_control").exists()


def initdb(rt: Runtime, log: CommandLog) -> None:
    """initdb into a scratch directory, renamed when complete (an interrupted initdb is simply redone)."""
    scratch = rt.pgdata + ".initdb"
    shutil.rmtree(rt.host(scratch), ignore_errors=True)
    if rt.host(rt.pgdata).exists():  # a data directory without pg_control: not a cluster, nothing to keep
        shutil.rmtree(rt.host(rt.pgdata))
    rt.run(
        log,
        ["initdb", "-D", scratch, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8"],
        what="initdb",
        hint="see the log; remove the data directory named there to start from scratch",
    )
    with (rt.host(scratch) / "postgresql.conf").open("a", encoding="utf-8") as fh:
        fh.write(f"\n# memvault's settings (rewritten at every start)\ninclude_if_exists = '{_CONF_NAME}'\n")
    rt.host(scratch).rename(rt.host(rt.pgdata))


def write_config(rt: Runtime, port: int) -> None:
    lines = [
        "# Written by memvault (app/db/cluster.py) before every start; change settings there.",
        f"port = {port}",
        f"unix_socket_directories = '{rt.socket_dir}'",
    ]
    lines += [f"{key} = {value}" for key, value in SERVER_CONFIG.items()]
    path = rt.host(rt.pgdata) / _CONF_NAME
    text = "\n".join(lines) + "\n"
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def running(rt: Runtime) -> tuple[int, int] | None:
    """(pid, port) of the cluster's postmaster if it is alive, from its ``postmaster.pid``."""
    try:
        lines = (rt.host(rt.pgdata) / "postmaster.pid").read_text().splitlines()
        pid, port = int(lines[0]), int(lines[3])
    except (OSError, ValueError, IndexError):
        return None
    return (pid, port) if _is_postgres(pid) else None


def clear_stale_pid(rt: Runtime) -> bool:
    """After a crash: remove ``postmaster.pid`` and socket locks whose process is gone. True if removed."""
    pid_file = rt.host(rt.pgdata) / "postmaster.pid"
    if not pid_file.exists() or running(rt) is not None:
        return False
    pid_file.unlink(missing_ok=True)
    for lock in rt.host(rt.socket_dir).glob(".s.PGSQL.*"):
        lock.unlink(missing_ok=True)
    return True


def start(rt: Runtime, log: CommandLog) -> None:
    rt.run(
        log,
        ["pg_ctl", "-D", rt.pgdata, "-l", rt.server_log, "-w", "-t", "90", "start"],
        new_session=True,
        what="starting PostgreSQL",
        hint=f"read the server log {rt.host(rt.server_log)}",
    )


def stop(rt: Runtime, log: CommandLog) -> None:
    rt.run(
        log,
        ["pg_ctl", "-D", rt.pgdata, "-m", "fast", "-w", "-t", "90", "stop"],
        what="stopping PostgreSQL",
        hint=f"read the server log {rt.host(rt.server_log)}",
    )


def port_free(port: int) -> bool:
    """Can a server listen on 127.0.0.1:port? (SO_REUSEADDR, like PostgreSQL: TIME_WAIT does not count.)"""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _is_postgres(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # alive, owned by another user
    try:
        return b"postgres" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return not Path("/proc/self").exists()  # no /proc (macOS): trust the pid


def _passwd_ids(passwd: Path, user: str) -> tuple[int, int]:
    try:
        for line in passwd.read_text(encoding="utf-8").splitlines():
            fields = line.split(":")
            if fields[0] == user and len(fields) > 3:
                return int(fields[2]), int(fields[3])
    except OSError:
        pass
    raise ProvisionError(
        f"there is no '{user}' user in {passwd}; the server cannot run as root",
        hint=f"create the '{user}' user (the postgresql packages do), or run memvault as "
        "a user other than root",
    )
