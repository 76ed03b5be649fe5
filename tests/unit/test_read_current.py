"""CurrentFirst: a question about how things stand now gets the latest restatement of a value first."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.models.tasks.text import term_set
from app.read.config import CurrentConfig
from app.read.context import RecallContext
from app.read.current import CurrentFirst, asks_current, current_first
from app.read.search import Candidate
from tests.unit.read_stage import run_stage

NOW = datetime(2024, 6, 1, tzinfo=UTC)


def _cand(i: int, score: float, text: str, session: str | None, days_ago: float, kind: str = "user") -> Candidate:
    return Candidate(id=i, score=score, base=score, cosine=0.5, text=text, content=text, session_id=session,
                     valid_at=NOW - timedelta(days=days_ago), source_kind=kind)


@pytest.mark.parametrize(("query", "expected"), [
    # the asker's state now: a marker, or the asker's own present tense
    ("How many followers do I have on Instagram now?", True),
    ("How many bikes do I currently own?", True),
    ("How often do I attend yoga classes?", True),
    ("How long have I been using my Fitbit?", True),
    ("What is my current job title?", True),
    ("Where does Jon live now?", True),
    ("Is Maria still working at the bakery?", True),
    ("我現在住在哪裡？", True),
    # a moment in the past, another time, or values added up / compared
    ("How many followers did I have on Instagram in May?", False),
    ("What did I order at the Thai place?", False),
    ("Before I bought the gravel bike, do I have other bikes?", False),
    ("When did I start going to yoga?", False),
    ("How many hours have I spent on both projects in total?", False),
    ("How many more followers do I have than last month?", False),
    ("What does Melanie do to destress?", False),  # another person's habits, no marker: not asked as a change
])
def test_asks_current(query: str, expected: bool) -> None:
    assert asks_current(query) is expected


def test_a_later_restatement_of_a_count_moves_above_the_earlier_one() -> None:
    old = _cand(1, 0.9, "I've got 1250 followers on Instagram now, it's going well.", "s-may", 20)
    other = _cand(2, 0.8, "I posted a photo of my new bike.", "s-x", 10)
    new = _cand(3, 0.7, "I was checking my follower count - I think I'm close to 1300 now.", "s-june", 2)
    out, moved = current_first([old, other, new], term_set("followers Instagram"), CurrentConfig())
    assert [c.id for c in out] == [3, 1, 2] and moved == 1
    assert out[0].score > out[1].score  # placed by its score too, for any stage that sorts again


def test_a_restated_preference_with_a_new_frequency_moves_up() -> None:
    old = _cand(1, 0.9, "I've been doing yoga twice a week, it helps me relax.", "s-aug", 120)
    new = _cand(2, 0.6, "I attend yoga classes, which is three times a week.", "s-nov", 5)
    out, moved = current_first([old, new], term_set("yoga"), CurrentConfig())
    assert [c.id for c in out] == [2, 1] and moved == 1


@pytest.mark.parametrize("pair", [
    # two past events at different times both happened: not an update
    ("I ran 5 miles on Monday.", "I ran 3 miles on Tuesday."),
    # the same value said again: nothing changed
    ("I have two cats at home.", "My two cats slept all day."),
])
def test_what_is_not_an_update_keeps_its_order(pair: tuple[str, str]) -> None:
    old = _cand(1, 0.9, pair[0], "s-1", 30)
    new = _cand(2, 0.5, pair[1], "s-2", 3)
    subject = term_set("miles cats")
    out, moved = current_first([old, new], subject, CurrentConfig())
    assert [c.id for c in out] == [1, 2] and moved == 0


def test_a_statement_that_shares_only_the_measure_is_not_an_update() -> None:
    old = _cand(1, 0.9, "I've spent around 5-6 hours on my abstract ocean sculpture so far.", "s-1", 10)
    other = _cand(2, 0.5, "I spent two days in the stand, but I didn't see any deer.", "s-2", 3)
    new = _cand(3, 0.4, "I've already spent 10-12 hours on my abstract ocean sculpture.", "s-3", 2)
    out, moved = current_first([old, other, new], term_set("hours spent abstract ocean sculpture"),
                               CurrentConfig())
    assert [c.id for c in out] == [3, 1, 2] and moved == 1


def test_no_move_within_one_session_from_the_assistant_or_past_the_window() -> None:
    old = _cand(1, 0.9, "I have 4 plants on the balcony.", "s-1", 30)
    same = _cand(2, 0.8, "Make that 5 plants on the balcony.", "s-1", 29)
    bot = _cand(3, 0.7, "With 6 plants on the balcony you should water daily.", "s-2", 3, kind="assistant")
    far = _cand(4, 0.1, "Now I have 7 plants on the balcony.", "s-3", 1)
    out, moved = current_first([old, same, bot, far], term_set("plants balcony"), CurrentConfig(window=3))
    assert [c.id for c in out] == [1, 2, 3, 4] and moved == 0


async def test_the_stage_runs_only_for_questions_about_now() -> None:
    stage = CurrentFirst(CurrentConfig())
    old = _cand(1, 0.9, "I own two bikes, a road bike and a mountain bike.", "s-1", 200)
    new = _cand(2, 0.5, "I'll have four bikes with me on this trip.", "s-2", 10)
    assert not stage.active(RecallContext("How many bikes did I own last year?"))
    assert stage.active(RecallContext("How many bikes do I currently own?"))
    events: list = []
    out = await run_stage(stage, [old, new], "How many bikes do I currently own?", events)
    assert [c.id for c in out] == [2, 1]
    assert events[-1]["moved"] == 1 and events[-1]["subject"] == sorted(term_set("bikes"))
    assert not CurrentFirst(CurrentConfig(enabled=False)).active(RecallContext("How many bikes do I own now?"))


@pytest.mark.parametrize("query", [
    "Can you suggest some activities I can do during my commute to work?",  # a request to the assistant
    "I've been feeling nostalgic lately. Do you think it would be a good idea to attend my reunion?",
    "What is the order of the concerts I went to, from earliest to latest?",  # ordering needs every statement
    "What book is Jon currently reading in August 2023?",  # a named time
    "Would Ana still be a nurse if she had not moved?",  # a hypothetical
])
def test_what_is_not_a_question_about_now(query: str) -> None:
    assert not asks_current(query)


async def test_a_question_that_names_a_time_is_left_to_the_timeframe() -> None:
    from app.read.timeframe import Timeframe

    stage = CurrentFirst(CurrentConfig())
    june = Timeframe(datetime(2024, 6, 1, tzinfo=UTC), datetime(2024, 6, 30, tzinfo=UTC), "this June")
    assert stage.active(RecallContext("How many bikes do I own now?"))
    assert not stage.active(RecallContext("How many bikes do I own now?", timeframe=june))


def test_a_chinese_restatement_moves_up_too() -> None:
    query = "我現在每週去幾次健身房？"
    old = _cand(1, 0.9, "我每週去健身房兩次。", "s-a", 30)
    new = _cand(2, 0.5, "我最近每週去健身房三次。", "s-b", 3)
    assert asks_current(query)
    out, moved = current_first([old, new], term_set(query), CurrentConfig())
    assert [c.id for c in out] == [2, 1] and moved == 1
