"""Schema migrations: Alembic revisions that apply the project's SQL files.

Two kinds of SQL file (STYLE.md): ``sql/incremental/NNN-slug.sql`` run once by the revision that introduces
them and never edited (their hashes are checked by a test), and ``sql/idempotent/NNN-area.sql``
(``CREATE OR REPLACE`` functions), applied once when an upgrade reaches head (pgai's rule), after every table
exists, so their bodies are checked at creation. A revision runs its incremental files only: it never applies the
idempotent layer, which names objects of later revisions (grants to the role of 0023), and calls no function (what
needs them runs at head: :data:`AT_HEAD`); a run-once file whose view needs a function ships a frozen copy of it in
a run-once file of its own (018-psql-view-functions.sql). Migrating is ``memvault migrate``
(:func:`upgrade`); the files are package data (app/db/resources.py).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from alembic import command
from alembic.config import Config

from app.db.resources import MIGRATIONS_DIR, SQL_DIR  # package data, found through importlib.resources
from app.errors import DatabaseError

VERSION_TABLE_SCHEMA = "memvault"


def incremental_path(name: str) -> Path:
    path = SQL_DIR / "incremental" / name
    if not path.is_file():
        raise DatabaseError(f"missing schema file {path}", hint="the checkout is incomplete; re-clone the repository")
    return path


def idempotent_paths() -> list[Path]:
    return sorted((SQL_DIR / "idempotent").glob("*.sql"))


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run_sql_file(connection, path: Path) -> None:
    """Run a whole SQL file on an Alembic/SQLAlchemy connection, inside its transaction."""
    run_sql(connection, path.read_text(encoding="utf-8"))


def run_sql(connection, text: str) -> None:
    """Run SQL text with no parameters, so ``%`` in ``format()`` calls is not taken for a placeholder."""
    connection.connection.driver_connection.execute(text)


def apply_incremental(connection, name: str) -> None:
    run_sql_file(connection, incremental_path(name))


def apply_idempotent(connection) -> None:
    for path in idempotent_paths():
        run_sql_file(connection, path)


# Steps that need the functions, run after them at every upgrade to head (each is idempotent): next months' log
# partitions, and the HNSW index of every vault past the threshold (revision 0010 replaced the shared one).
ANN_INDEXES = "SELECT memvault.build_due_ann_indexes_v1(5000)"
AT_HEAD = ("SELECT memvault.ensure_log_partitions_v1(2)", ANN_INDEXES)


def apply_at_head(connection, *, ann_indexes: bool = True) -> None:
    apply_idempotent(connection)
    for statement in AT_HEAD:
        if ann_indexes or statement != ANN_INDEXES:
            run_sql(connection, statement)


def sqlalchemy_url(url: str) -> str:
    """``postgresql://`` as psycopg 3 under SQLAlchemy."""
    for prefix in ("postgresql+psycopg://", "postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix):]
    raise DatabaseError(f"not a PostgreSQL URL: {url!r}", hint="use postgresql://user@host:port/dbname")


def alembic_config(url: str) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.set_main_option("sqlalchemy.url", sqlalchemy_url(url).replace("%", "%%"))
    return cfg


def upgrade(url: str, revision: str = "head", *, ann_indexes: bool = True) -> None:
    """Alembic to ``revision``; at head, then the idempotent SQL files once (a database already at head gets this
    checkout's functions too) and the :data:`AT_HEAD` steps. ``ann_indexes`` False: without building the due
    per-vault HNSW indexes (the benchmarks build their vaults' own when a fill is done: a vault whose fill was
    stopped midway would get its index built at every start, then walked by every insert of the fill going on)."""
    command.upgrade(alembic_config(url), revision)
    if revision in ("head", head_revision()):
        reapply_idempotent(url, ann_indexes=ann_indexes)


def reapply_idempotent(url: str, *, ann_indexes: bool = True) -> None:
    from sqlalchemy import create_engine

    engine = create_engine(sqlalchemy_url(url))
    try:
        with engine.begin() as conn:
            apply_at_head(conn, ann_indexes=ann_indexes)
    finally:
        engine.dispose()


def current_revision(url: str) -> str | None:
    from alembic.runtime.migration import MigrationContext
    from sqlalchemy import create_engine

    engine = create_engine(sqlalchemy_url(url))
    try:
        with engine.connect() as conn:
            ctx = MigrationContext.configure(conn, opts={"version_table_schema": VERSION_TABLE_SCHEMA})
            return ctx.get_current_revision()
    finally:
        engine.dispose()


def head_revision() -> str:
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(alembic_config("postgresql://x@localhost/x")).get_current_head()
    assert head is not None
    return head
