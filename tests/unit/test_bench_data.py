"""Loaders for the evaluation formats: dates, evidence ids, gzip or plain."""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime

import pytest

from app.importers.datasets import (DataFormatError, LmeQuestion, Session, Turn, evidence_ids, load_locomo,
                            load_longmemeval, parse_locomo_date, parse_longmemeval_date)
from app.bench.longmemeval import as_of_for


@pytest.mark.parametrize(("text", "expected"), [
    ("1:56 pm on 8 May, 2023", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
    ("10:37 am on 27 June, 2023", datetime(2023, 6, 27, 10, 37, tzinfo=UTC)),
    ("12:09 am on 13 September, 2023", datetime(2023, 9, 13, 0, 9, tzinfo=UTC)),
    ("12:30 pm on 1 Jan, 2024", datetime(2024, 1, 1, 12, 30, tzinfo=UTC)),
    # the same session date written other ways (issue 21): read, not refused
    ("May 8 2023", datetime(2023, 5, 8, tzinfo=UTC)),
    ("8 May 2023, 1:56 pm", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
    ("May 8th, 2023 at 1:56 PM", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
    ("8:30 p.m. on 12 December, 2022", datetime(2022, 12, 12, 20, 30, tzinfo=UTC)),
    ("2023-05-08 13:56", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
    ("Monday, 8 May 2023", datetime(2023, 5, 8, tzinfo=UTC)),
    ("2023年5月8日 下午1:56", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
])
def test_locomo_dates(text, expected):
    assert parse_locomo_date(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("2023/05/20 (Sat) 02:21", datetime(2023, 5, 20, 2, 21, tzinfo=UTC)),
    ("2023/10/27 (Fri) 13:00", datetime(2023, 10, 27, 13, 0, tzinfo=UTC)),
    ("2023/01/02", datetime(2023, 1, 2, tzinfo=UTC)),
])
def test_longmemeval_dates(text, expected):
    assert parse_longmemeval_date(text) == expected


@pytest.mark.parametrize("bad", ["", "1:56 pm on 8 Smarch, 2023", "yesterday", "8 May"])
def test_bad_locomo_dates(bad):
    with pytest.raises(DataFormatError):
        parse_locomo_date(bad)


def test_evidence_ids_tolerate_joined_items():
    assert evidence_ids(["D1:3", "D8:6; D9:17", "D1:3"]) == ("D1:3", "D8:6", "D9:17")
    assert evidence_ids([]) == () and evidence_ids(None) == ()


def test_load_longmemeval_gzip_and_plain(tmp_path):
    rows = [{"question_id": "q1_abs", "question_type": "single-session-user", "question": "Where?",
             "question_date": "2023/05/20 (Sat) 02:21", "answer": "x", "answer_session_ids": ["s1"],
             "haystack_dates": ["2023/05/01 (Mon) 10:00"], "haystack_session_ids": ["s1"],
             "haystack_sessions": [[{"role": "user", "content": "hi there", "has_answer": True},
                                    {"role": "assistant", "content": " "}]]}]
    plain, gz = tmp_path / "a.json", tmp_path / "a.json.gz"
    plain.write_text(json.dumps(rows))
    gz.write_bytes(gzip.compress(json.dumps(rows).encode()))
    for p in (plain, gz):
        (q,) = load_longmemeval(p)
        assert q.abstention and q.turn_count == 1 and q.sessions[0].turns[0].has_answer
        assert q.sessions[0].date == datetime(2023, 5, 1, 10, 0, tzinfo=UTC)


def _question(asked: datetime, *session_dates: datetime) -> LmeQuestion:
    sessions = tuple(Session(f"s{i}", d, (Turn("user", "hello"),)) for i, d in enumerate(session_dates))
    return LmeQuestion("q", "temporal-reasoning", "Which came first?", asked, "a", ("s1",), sessions)


def test_longmemeval_question_is_asked_after_its_whole_history():
    asked = datetime(2023, 5, 24, 8, 2, tzinfo=UTC)
    late = datetime(2023, 5, 24, 16, 55, tzinfo=UTC)  # a gold session dated after its question, the same day
    q = _question(asked, datetime(2023, 5, 24, 1, 32, tzinfo=UTC), late)
    assert as_of_for(q) == late  # the default: after the history
    assert as_of_for(q, "question") == asked
    assert as_of_for(q, "end-of-day") == datetime(2023, 5, 24, 23, 59, 59, tzinfo=UTC)
    assert as_of_for(q, "none") is None
    earlier = _question(asked, datetime(2023, 5, 1, tzinfo=UTC), datetime(2023, 5, 20, tzinfo=UTC))
    assert as_of_for(earlier) == asked  # the usual case: the question comes last


def test_load_locomo(tmp_path):
    rows = [{"sample_id": "c1", "conversation": {
        "speaker_a": "Ann", "speaker_b": "Bo",
        "session_2_date_time": "2:00 pm on 9 May, 2023",
        "session_2": [{"speaker": "Bo", "dia_id": "D2:1", "text": "Look",
                       "blip_caption": "a photo of a cat"}],
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "Hello Bo"}]},
        "qa": [{"question": "What?", "answer": "cat", "evidence": ["D2:1"], "category": 4},
               {"question": "Why?", "adversarial_answer": "no", "evidence": [], "category": 5}]}]
    p = tmp_path / "l.json"
    p.write_text(json.dumps(rows))
    (c,) = load_locomo(p)
    assert [s.id for s in c.sessions] == ["session_1", "session_2"]
    assert c.turns_by_dia_id()["D2:1"].content == "Bo: Look [shares an image: a photo of a cat]"
    assert c.qa[0].evidence == ("D2:1",) and c.qa[1].category == 5 and c.turn_count == 2
