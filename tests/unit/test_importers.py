"""The readers of foreign exports, on small fixtures in the exact shape the real exports have."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from app.errors import InvalidInput
from app.importers.detect import detect
from app.importers.run import read_conversations, session_id

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "imports"


@pytest.mark.parametrize(("name", "fmt"), [("chatgpt_conversations.json", "chatgpt"),
                                           ("claude_conversations.json", "claude"), ("locomo.json", "locomo"),
                                           ("longmemeval.json", "longmemeval"), ("turns.jsonl", "jsonl")])
def test_formats_are_detected_from_content(name: str, fmt: str) -> None:
    assert detect((FIX / name).read_bytes()) == fmt


def test_unknown_content_says_what_is_imported() -> None:
    with pytest.raises(InvalidInput, match="not a format memvault imports") as exc:
        detect(b'{"hello": "world"}')
    assert "ChatGPT" in exc.value.hint
    assert detect(b'{"type": "header", "format": "memvault-export", "version": 1}\n{}') == "memvault"


def test_chatgpt_main_line_follows_current_node() -> None:
    fmt, convs = read_conversations(FIX / "chatgpt_conversations.json")
    assert fmt == "chatgpt" and [c.title for c in convs] == ["Moving to Tainan", "Marathon plan"]
    first = convs[0]
    assert first.source_id == "6a1f2c3d-0000-4000-8000-000000000001"
    assert [(t.role, t.content[:24]) for t in first.turns] == [
        ("user", "I'm moving to Tainan nex"), ("assistant", "Congratulations on the m"),
        ("user", "I booked Dr. Lin at the "), ("assistant", "Great, Dr. Lin's clinic ")]
    # the regenerated answer, the edited prompt, the hidden system message, the tool call and its output: not kept
    text = " ".join(t.content for t in first.turns)
    assert "earlier answer" not in text and "edited away" not in text and "search(" not in text
    assert "Open 9-18" not in text and "file-service" not in text  # the image part of a multimodal message
    assert first.turns[0].said_at == datetime.fromtimestamp(1709280010.0, UTC)


def test_chatgpt_branches_on_request() -> None:
    _, convs = read_conversations(FIX / "chatgpt_conversations.json", branches=True)
    branches = {c.source_id: c for c in convs if "/branch/" in c.source_id}
    assert set(branches) == {"6a1f2c3d-0000-4000-8000-000000000001/branch/a-1b",
                             "6a1f2c3d-0000-4000-8000-000000000001/branch/u-2b"}
    assert [t.content[:14] for t in branches["6a1f2c3d-0000-4000-8000-000000000001/branch/a-1b"].turns] == [
        "(an earlier an"]  # from the fork on: the shared prompt is in the main line's session


def test_claude_messages_text_blocks_and_times() -> None:
    fmt, convs = read_conversations(FIX / "claude_conversations.json")
    assert fmt == "claude" and [c.title for c in convs] == ["Kitchen renovation budget", None]
    kitchen = convs[0]
    assert [t.role for t in kitchen.turns] == ["user", "assistant"]
    assert kitchen.turns[1].content == "Oak is durable. Keep 10% of the budget for surprises."  # no thinking block
    assert kitchen.turns[0].said_at == datetime(2024, 5, 2, 8, 15, 31, tzinfo=UTC)
    assert len(convs[1].turns) == 1  # the empty assistant message is left out


def test_benchmark_files_and_jsonl() -> None:
    _, locomo = read_conversations(FIX / "locomo.json")
    assert [c.source_id for c in locomo] == ["conv-fixture/session_1", "conv-fixture/session_2"]
    assert locomo[0].turns[1].content.startswith("Melanie: That's great!") and "clay pot" in locomo[0].turns[1].content
    assert locomo[1].turns[0].said_at == datetime(2023, 6, 27, 10, 37, tzinfo=UTC)
    _, lme = read_conversations(FIX / "longmemeval.json")
    assert [c.source_id for c in lme] == ["sharegpt_abc_0", "answer_fixture_1"]  # a shared session once
    _, turns = read_conversations(FIX / "turns.jsonl")
    assert [(c.source_id, len(c.turns)) for c in turns] == [("standup-1", 2), ("standup-2", 1)]
    assert turns[1].turns[0].said_at == datetime(2024, 9, 9, 9, tzinfo=UTC)  # "timestamp" is a said_at too


def test_jsonl_errors_name_the_line(tmp_path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"role": "user", "content": "fine"}) + "\n" + json.dumps({"role": "robot",
                                                                                       "content": "x"}) + "\n")
    with pytest.raises(InvalidInput, match="line 2: role"):
        read_conversations(bad, "jsonl")
    with pytest.raises(InvalidInput, match="cannot read"):
        read_conversations(tmp_path / "missing.json")


def test_session_ids_fit_the_column() -> None:
    assert session_id("claude", "abc") == "claude:abc"
    long = session_id("chatgpt", "x" * 300)
    assert len(long) <= 200 and long == session_id("chatgpt", "x" * 300)
