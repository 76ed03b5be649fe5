"""``memvault bench answers`` (app/bench/answers.py): a vault's answers as one SHA-256, the same for two runs of
one tree on one vault (write-back off, a fixed as_of), another when an answer changes; ``--out`` one JSON line a
question; bad arguments refused with a message before anything runs."""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime, timedelta

import pytest

from app.bench.answers import answer_line, fingerprint, handler
from app.cli import build_parser
from tests.integration.read_helpers import Mem, put_blocks

T0 = datetime(2026, 3, 9, 12, 0, tzinfo=UTC)
MEMS = [Mem("Biscuit the puppy swam in Lake Tahoe with the kids", days_ago=3),
        Mem("My dentist appointment is on Friday at 3pm with Dr Lin", days_ago=1),
        Mem("My sister moved to Lisbon last spring", days_ago=40)]
QUESTIONS = ["where did Biscuit swim?", "who is my dentist?", "where does my sister live?"]


async def test_the_same_answers_give_the_same_hash_and_a_changed_one_another(services, vault, tmp_path) -> None:
    as_of = T0 + timedelta(days=1)
    await put_blocks(services, vault, MEMS, now=T0)
    first = await fingerprint(services, vault, QUESTIONS, as_of=as_of, out=tmp_path / "a.jsonl")
    again = await fingerprint(services, vault, QUESTIONS, as_of=as_of, out=tmp_path / "b.jsonl")
    assert first["sha256"] == again["sha256"] and first["questions"] == 3
    lines = (tmp_path / "a.jsonl").read_text().splitlines()
    assert lines == (tmp_path / "b.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines]
    assert [r["query"] for r in rows] == QUESTIONS
    assert any("Dr Lin" in json.dumps(r["result"]) for r in rows)  # real answers, not empty ones
    assert not {"stage_ms", "total_ms", "recall_id"} & set(rows[0]["meta"])

    await put_blocks(services, vault, [Mem("My dentist is now Dr Okafor, since Lin retired", days_ago=0.5)], now=T0)
    changed = await fingerprint(services, vault, QUESTIONS, as_of=as_of)
    assert changed["sha256"] != first["sha256"]


def test_an_answer_line_drops_timings_and_the_log_id() -> None:
    meta = {"intent": "fact", "stage_ms": {"search": 1.2}, "total_ms": 3.4, "recall_id": 7}
    a = answer_line(0, "q", {"cards": []}, meta)
    b = answer_line(0, "q", {"cards": []}, {**meta, "stage_ms": {"search": 9.9}, "total_ms": 8.0, "recall_id": 8})
    assert a == b and json.loads(a)["meta"] == {"intent": "fact"}


@pytest.mark.parametrize(("argv", "message"), [
    (["--as-of", "yesterday"], "not an ISO 8601 time"),
    (["--as-of", "2026-11-28T12:00:00"], "UTC offset"),
    (["--queries", "0"], "at least 1"),
    (["--read", "search.no_such_lever=1"], "--read"),
])
def test_bad_arguments_are_refused_with_a_message(argv, message, capsys) -> None:
    args = build_parser().parse_args(["bench", "answers", "--vault", "v", *argv])
    assert isinstance(args, argparse.Namespace)
    assert handler(args) == 2
    assert message in capsys.readouterr().err


def test_help(capsys) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["bench", "answers", "--help"])
    assert "SHA-256" in capsys.readouterr().out
