"""``memvault import``: foreign exports into a vault through the write track, with their original times, a
progress bar, and re-runs that write nothing twice."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from app.importers.run import import_conversations, read_conversations

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "imports"


async def _sessions(services, vault) -> dict[str, int]:
    rows = await services.db.fetchall("SELECT id, turn_count FROM memvault.session WHERE vault_id = %s",
                                      (vault.id,), vault_id=vault.id)
    return {r["id"]: r["turn_count"] for r in rows}


async def test_chatgpt_import_resumes_where_it_stopped(services, vault, tmp_path) -> None:
    # An export taken earlier: the first conversation stopped after its first answer.
    data = json.loads((FIX / "chatgpt_conversations.json").read_text())
    data[0]["current_node"] = "a-1"
    earlier = tmp_path / "conversations.json"
    earlier.write_text(json.dumps(data))
    fmt, convs = read_conversations(earlier)
    first = await import_conversations(services, vault, fmt, convs)
    assert (first.sessions_new, first.turns_written) == (2, 4)
    sid = "chatgpt:6a1f2c3d-0000-4000-8000-000000000001"
    assert (await _sessions(services, vault))[sid] == 2

    seen: list[int] = []
    fmt, convs = read_conversations(FIX / "chatgpt_conversations.json")
    second = await import_conversations(services, vault, fmt, convs, progress=seen.append)
    assert (second.sessions_resumed, second.sessions_complete, second.turns_written, second.turns_skipped) == \
        (1, 1, 2, 4)
    assert sum(seen) == 2 and (await _sessions(services, vault))[sid] == 4
    again = await import_conversations(services, vault, fmt, convs)
    assert (again.turns_written, again.sessions_complete) == (0, 2)  # nothing written twice

    # the original times are the memories' valid time
    row = await services.db.fetchone(
        "SELECT b.valid_at FROM memvault.block b WHERE b.vault_id = %s AND b.content LIKE %s",
        (vault.id, "%booked Dr. Lin%"), vault_id=vault.id)
    assert row["valid_at"] == datetime.fromtimestamp(1709280100.0, UTC)


async def test_import_command_with_progress_bar(memvault_env, capsys) -> None:
    """The CLI as a user runs it: format detected, a progress bar on stderr, a summary on stdout; then recall."""
    from app.cli import main

    for name in ("chatgpt_conversations.json", "claude_conversations.json", "locomo.json", "longmemeval.json",
                 "turns.jsonl"):
        code = await asyncio.to_thread(main, ["import", "--vault", "imported", str(FIX / name)])
        out = capsys.readouterr()
        assert code == 0, out.err
        assert "imported into vault imported:" in out.out
        assert "import " in out.err and "turn" in out.err  # tqdm's bar, on stderr
    rerun = await asyncio.to_thread(main, ["import", "--vault", "imported",
                                           str(FIX / "claude_conversations.json")])
    assert rerun == 0 and "0 turns in 0 new and 0 resumed sessions" in capsys.readouterr().out
    code = await asyncio.to_thread(main, ["recall", "imported", "What is my kitchen budget?", "--format", "json"])
    assert code == 0 and "12,000 euros" in capsys.readouterr().out
    assert await asyncio.to_thread(main, ["import", "--vault", "imported", str(FIX / "nope.json")]) == 2
    assert "cannot read" in capsys.readouterr().err


@pytest.mark.parametrize("fmt", ["claude", "jsonl"])
async def test_turn_times_are_kept(services, vault, fmt) -> None:
    name = {"claude": "claude_conversations.json", "jsonl": "turns.jsonl"}[fmt]
    f, convs = read_conversations(FIX / name)
    await import_conversations(services, vault, f, convs)
    rows = await services.db.fetchall("SELECT said_at FROM memvault.turn WHERE vault_id = %s ORDER BY said_at",
                                      (vault.id,), vault_id=vault.id)
    assert [r["said_at"] for r in rows] == sorted(t.said_at for c in convs for t in c.turns)
