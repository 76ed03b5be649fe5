"""The DBA path: ``pg_dump -Fc`` of the whole database and ``pg_restore`` into a new one, with the client programs
of the server's own major version (the embedded cluster's, run inside its root filesystem through ``chroot``; the
host's for an external server), then the repair Apache AGE 1.5 needs after a logical restore.

AGE keeps each graph's schema oid twice (``ag_graph.namespace``, a ``regnamespace`` that a dump writes by name, and
``ag_graph.graphid`` / ``ag_label.graph``, bare oids that keep the old database's value); after a restore the two
disagree, and a later schema that happens to get the stale oid would collide. ``memvault.repair_graph_catalog_v1``
sets the bare oids from the namespace again (apache/age issue 2503).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg

from app.errors import ConfigError, DatabaseError, InvalidInput
from app.private_files import open_private
from app.settings import Settings


def client(settings: Settings, program: str) -> tuple[list[str], dict[str, str] | None]:
    """argv prefix and environment to run a PostgreSQL client program (``pg_dump``, ``pg_restore``)."""
    if not settings.database_url:
        from app.db.cluster import client_argv, find_host_postgres
        from app.db.provision import server_status
        from app.db.rootfs import chroot_env

        status = server_status(settings)
        if (argv := client_argv(status.mode, status.rootfs, program)) is not None:
            return argv, chroot_env()
        if (bindir := find_host_postgres()) is not None:
            return [str(Path(bindir) / program)], None
    found = shutil.which(program)
    if found is None:
        raise ConfigError(f"{program} is not installed", hint="install the PostgreSQL 17 client programs")
    return [found], None


def with_db(url: str, dbname: str) -> str:
    return urlunsplit(urlsplit(url)._replace(path=f"/{dbname}"))


def dump(settings: Settings, url: str, out: Path) -> int:
    """``pg_dump -Fc`` of the database at ``url`` into ``out`` (mode 0600: it holds every vault); returns its size
    in bytes."""
    argv, env = client(settings, "pg_dump")
    with open_private(out, binary=True) as fh:
        proc = subprocess.run([*argv, "-Fc", "-d", url], stdout=fh, stderr=subprocess.PIPE, env=env, check=False)
    if proc.returncode != 0:
        raise DatabaseError(f"pg_dump failed: {proc.stderr.decode(errors='replace').strip()}")
    return out.stat().st_size


def restore(settings: Settings, dump_file: Path, url: str, dbname: str) -> str:
    """A new database ``dbname`` on the server of ``url`` from ``dump_file``; returns its URL. The database
    must not exist (AGE refuses ``pg_restore --clean`` over its label tables)."""
    if not dump_file.is_file():
        raise InvalidInput(f"no dump file {dump_file}")
    admin = with_db(url, "postgres")
    with psycopg.connect(admin, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (dbname,)).fetchone():
            raise InvalidInput(f"database {dbname!r} already exists", hint="restore into a new database name")
        conn.execute("DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memvault_app') THEN "
                     "CREATE ROLE memvault_app NOLOGIN; END IF; END $$")
        conn.execute(psycopg.sql.SQL("CREATE DATABASE {}").format(psycopg.sql.Identifier(dbname)))
    target = with_db(url, dbname)
    argv, env = client(settings, "pg_restore")
    with dump_file.open("rb") as fh:
        proc = subprocess.run([*argv, "--exit-on-error", "-d", target], stdin=fh, stderr=subprocess.PIPE,
                              env=env, check=False)
    if proc.returncode != 0:
        raise DatabaseError(f"pg_restore failed: {proc.stderr.decode(errors='replace').strip()}",
                            hint=f"the partly restored database {dbname!r} is left for inspection; drop it")
    with psycopg.connect(target, autocommit=True) as conn:
        conn.execute("SELECT memvault.repair_graph_catalog_v1()")
    return target
