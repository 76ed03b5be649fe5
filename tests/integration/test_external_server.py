"""`memvault db up` with MEMVAULT_DATABASE_URL, against a second database of the test server: it creates the database
and both extensions when the URL's role may, and otherwise prints the SQL an administrator must run, which, once
run, lets the same command succeed. Then `memvault migrate` on the created database."""

from __future__ import annotations

import re
import subprocess
import sys
import uuid
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

from tests.conftest import cli_env


def _url(base: str, *, user: str | None = None, db: str) -> str:
    parts = urlsplit(base)
    netloc = parts.netloc if user is None else f"{user}@{parts.hostname}:{parts.port}"
    return urlunsplit(parts._replace(netloc=netloc, path=f"/{db}"))


def _memvault(url: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app.cli", *args], env=cli_env(url), capture_output=True,
                          text=True, timeout=300, check=False)


@pytest.fixture
def names(server_url: str):
    db, role = f"mv_ext_{uuid.uuid4().hex[:8]}", f"mv_ext_role_{uuid.uuid4().hex[:8]}"
    yield db, role
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
        conn.execute(f'DROP ROLE IF EXISTS "{role}"')


def test_db_up_creates_the_database_and_extensions_then_migrate_works(server_url: str, names) -> None:
    db, _ = names
    url = _url(server_url, db=db)
    up = _memvault(url, "db", "up")
    assert up.returncode == 0, up.stderr
    assert f"created the database {db}" in up.stdout and "created the extension age" in up.stdout
    assert up.stdout.strip().splitlines()[-1] == url
    again = _memvault(url, "db", "up")  # idempotent: nothing left to create
    assert again.returncode == 0 and "created" not in again.stdout, again.stdout
    migrate = _memvault(url, "migrate")
    assert migrate.returncode == 0, migrate.stderr
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT to_regclass('memvault.block')").fetchone()[0] is not None


def test_a_role_that_may_not_create_gets_the_sql_to_paste(server_url: str, names) -> None:
    db, role = names
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'CREATE ROLE "{role}" LOGIN')
    url = _url(server_url, user=role, db=db)
    up = _memvault(url, "db", "up")
    assert up.returncode == 1, up.stdout
    assert "Traceback" not in up.stderr
    assert f"may not create it" in up.stderr
    script = [line.strip() for line in up.stderr.splitlines() if re.match(r"\s+(CREATE|ALTER|\\connect)", line)]
    assert script[0] == f'CREATE DATABASE "{db}" OWNER "{role}";'
    assert "CREATE EXTENSION IF NOT EXISTS age;" in script
    with psycopg.connect(server_url, autocommit=True) as conn:  # the administrator pastes it
        conn.execute(script[0])
    with psycopg.connect(_url(server_url, db=db), autocommit=True) as conn:
        for statement in script[2:]:
            conn.execute(statement)
    up = _memvault(url, "db", "up")
    assert up.returncode == 0, up.stderr
    assert "not a superuser" in up.stdout  # and what that means for `memvault migrate`
