"""The ``memvault`` command as a script uses it: real processes on the test's database, their exit codes as
``app.cli`` documents them, no traceback on stderr for anything expected, and the new curation commands (forget,
feedback, session close)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from datetime import UTC, datetime

from tests.conftest import cli_env


def memvault(db_url: str, *args: str, timeout: float = 120, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env={**cli_env(db_url), **env})


def _clean(r: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in r.stderr, r.stderr


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_recall_prints_no_traceback_and_keeps_its_access_counts(db_url, services, vault) -> None:
    r = memvault(db_url, "remember", vault.name, "I moved to Tainan last week.", "--json")
    assert r.returncode == 0, r.stderr
    block = json.loads(r.stdout)["block_id"]
    r = memvault(db_url, "recall", vault.name, "where do I live now?", "--format", "json")
    _clean(r)
    assert r.returncode == 0 and r.stderr == ""
    assert [c["id"] for c in json.loads(r.stdout)["cards"]] == [block]
    row = await services.db.fetchone("SELECT access_count FROM memvault.block_usage WHERE block_id = %s",
                                     (block,), vault_id=vault.id)
    assert row is not None and row["access_count"] == 1  # the write-back ran before the pool closed


async def test_remember_never_creates_a_vault(db_url, services) -> None:
    r = memvault(db_url, "remember", "no-such-vault", "I like green tea.")
    _clean(r)
    assert r.returncode == 3
    assert r.stderr.splitlines() == ["memvault: unknown vault 'no-such-vault'",
                                     "  hint: create it: memvault vault create no-such-vault"]
    assert await services.db.fetchone("SELECT 1 FROM memvault.vault WHERE name = 'no-such-vault'") is None


def test_serve_on_a_busy_port_is_a_conflict(db_url) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        r = memvault(db_url, "serve", "--no-worker", "--port", str(port), timeout=60)
    _clean(r)
    assert r.returncode == 4, (r.stdout, r.stderr)
    assert "API on" not in r.stdout
    assert r.stderr.startswith(f"memvault: cannot listen on 127.0.0.1:{port}: ")
    assert len(r.stderr.splitlines()) == 2 and "hint: " in r.stderr  # what happened, what to do


def test_a_database_that_is_down_fails_fast_with_one_clear_line(db_url) -> None:
    down = f"postgresql://postgres@127.0.0.1:{_free_port()}/memvault"  # nothing listens there
    for args in (("recall", "v", "anything"), ("remember", "v", "a fact"), ("vault", "list")):
        started = time.monotonic()
        r = memvault(db_url, *args, MEMVAULT_DATABASE_URL=down)
        took = time.monotonic() - started
        _clean(r)
        assert r.returncode == 5, (args, r.stderr)
        lines = r.stderr.splitlines()
        assert len(lines) == 2 and lines[0].startswith("memvault: database unavailable: ") and \
            "Connection refused" in lines[0] and lines[1].startswith("  hint: "), r.stderr
        assert took < 3 + 2, took  # the brief's 3 s, plus this process's Python start on a shared machine


async def test_forget_feedback_and_session_close(db_url, services, vault) -> None:
    from app.write.sessions import TurnIn

    now = datetime.now(UTC)
    await services.sessions.append_turns(vault, "s1", [
        TurnIn("user", "I switched to a Framework 13 laptop last month.", now)])
    r = memvault(db_url, "session", "close", vault.name, "s1", "--json")
    _clean(r)
    assert r.returncode == 0, r.stderr
    closed = json.loads(r.stdout)
    assert closed["session_id"] == "s1" and closed["segment"] == 1 and closed["units"]
    r = memvault(db_url, "session", "close", vault.name, "s1")
    assert r.returncode == 4 and "already closed" in r.stderr  # nothing new since the close: a conflict
    r = memvault(db_url, "session", "close", vault.name, "nope")
    assert r.returncode == 3

    r = memvault(db_url, "remember", vault.name, "My dentist is Dr. Lin.", "--json")
    block = json.loads(r.stdout)["block_id"]
    r = memvault(db_url, "feedback", vault.name, str(block), "+", "--note", "right", "--json")
    _clean(r)
    assert r.returncode == 0 and json.loads(r.stdout) == {"memory_id": block, "feedback_up": 1, "feedback_down": 0}
    r = memvault(db_url, "feedback", vault.name, "999999", "-")
    assert r.returncode == 3
    r = memvault(db_url, "feedback", vault.name, str(block), "maybe")
    assert r.returncode == 2  # argparse: + or -

    r = memvault(db_url, "forget", vault.name, str(block))
    _clean(r)
    assert r.returncode == 0 and f"memory {block} forgotten" in r.stdout
    r = memvault(db_url, "recall", vault.name, "who is my dentist?", "--format", "json")
    assert block not in [c["id"] for c in json.loads(r.stdout)["cards"]]
    r = memvault(db_url, "forget", vault.name, str(block))
    assert r.returncode == 3  # already forgotten
    r = memvault(db_url, "forget", "no-such-vault", "1")
    assert r.returncode == 3 and "memvault vault create" in r.stderr
