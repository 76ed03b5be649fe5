"""SessionSpread: a question that gathers across occasions takes its candidates from more sessions."""

from __future__ import annotations

import pytest

from app.read.config import SpreadConfig
from app.read.context import RecallContext
from app.read.search import Candidate
from app.read.spread import SessionSpread, asks_many, spread
from tests.unit.read_stage import run_stage


def _cand(i: int, score: float, session: str | None) -> Candidate:
    return Candidate(id=i, score=score, base=score, cosine=0.5, text=f"m{i}", content=f"m{i}", session_id=session)


@pytest.mark.parametrize(("query", "expected"), [
    # many: markers, a plural noun asked about, the present perfect of experience
    ("What hobbies do Ana and Tom both enjoy?", True),
    ("What do my sister and I have in common?", True),
    ("How many times have I been to the dentist this year?", True),
    ("What is the order of the three concerts I went to?", True),
    ("Which restaurants has Priya tried?", True),
    ("What sports does Omar play?", True),
    ("What kinds of music do I listen to?", True),
    ("Where has Lee travelled for work?", True),
    ("What have I bought for the new flat?", True),
    ("Which books did I finish last summer?", True),
    ("朋友推薦過哪些餐廳？", True),
    # one thing: a fact, an event, a time, a reason; a present perfect inside a clause; the progressive
    ("What did Priya order at the restaurant?", False),
    ("Where did Lee move from?", False),
    ("When did Omar start playing tennis?", False),
    ("How long has Tom lived in Oslo?", False),
    ("Why did Ana change jobs?", False),
    ("What kind of car does Tom drive?", False),
    ("How does Ana describe the bakery that Tom has opened?", False),
    ("What topic has Tom been writing about lately?", False),
    ("What is my sister's name?", False),
    ("What news did Ana share last week?", False),
    ("Is Lee going to the party?", False),
])
def test_asks_many_reads_the_questions_form(query: str, expected: bool):
    assert asks_many(query) is expected


def test_spread_gives_each_next_place_to_the_best_discounted_score():
    cands = [_cand(1, 1.00, "trip"), _cand(2, 0.95, "trip"), _cand(3, 0.90, "trip"), _cand(4, 0.70, "gym"),
             _cand(5, 0.60, "dinner"), _cand(6, 0.50, None)]
    # weight 0.35: trip's second candidate counts 0.95 x 0.65 = 0.62 < gym's 0.70; its third 0.90 x 0.42 = 0.38
    assert [c.id for c in spread(cands, 0.35)] == [1, 4, 2, 5, 6, 3]
    assert [c.id for c in spread(cands, 0.0)] == [1, 2, 3, 4, 5, 6]  # no discount: the order of the scores
    out = spread(cands, 0.35)
    assert {c.id: c.score for c in out} == {c.id: c.score for c in cands}  # nothing added, dropped or rescored


async def test_the_stage_is_active_only_for_questions_that_ask_for_many():
    stage = SessionSpread(SpreadConfig(weight=0.35, turn_weight=0.0))
    assert stage.active(RecallContext("Which cities has Jo visited?"))
    assert not stage.active(RecallContext("Which city did Jo visit in May?"))
    assert SessionSpread(SpreadConfig(weight=0.35, always=True)).active(RecallContext("Which city did Jo visit?"))
    off = SpreadConfig(weight=0.0, turn_weight=0.0)
    assert not SessionSpread(off).active(RecallContext("Which cities has Jo visited?"))
    assert not SessionSpread(SpreadConfig(enabled=False)).active(RecallContext("Which cities has Jo visited?"))
    events: list = []
    cands = [_cand(1, 1.0, "a"), _cand(2, 0.9, "a"), _cand(3, 0.8, "b")]
    out = await run_stage(stage, cands, "Which cities has Jo visited?", events=events)
    assert [c.id for c in out] == [1, 3, 2]
    assert events == [{"stage": "spread", "moved": 2, "sessions": 2}]


def _said(i: int, score: float, session: str, turns: tuple[int, ...]) -> Candidate:
    return Candidate(id=i, score=score, base=score, cosine=0.5, text=f"m{i}", content=f"m{i}", session_id=session,
                     source_turn_ids=turns)


def test_turn_weight_gives_the_next_place_to_another_thing_said():
    # 1 is a unit of turn 7, 2 the chunk of the same turn, 3 and 4 other turns of the same session
    cands = [_said(1, 1.00, "s", (7,)), _said(2, 0.95, "s", (7,)), _said(3, 0.90, "s", (8,)),
             _said(4, 0.50, "t", (9,)), _said(5, 0.40, "u", ())]
    assert [c.id for c in spread(cands, 0.0)] == [1, 2, 3, 4, 5]  # off: the order of the scores
    # 0.5: the chunk counts 0.475 after its unit, below turn 8's 0.90 and turn 9's 0.50
    assert [c.id for c in spread(cands, 0.0, 0.5)] == [1, 3, 4, 2, 5]
    assert [c.id for c in spread(cands, 0.0, 1.0)] == [1, 3, 4, 5, 2]  # 1: after everything else said
    # with the session weight too, both discounts multiply: after 1, the chunk counts 0.95 x 0.65 x 0.5 = 0.31,
    # below turn 8's 0.90 x 0.65 = 0.585; without the turn discount it counts 0.62 and takes the second place
    assert [c.id for c in spread(cands, 0.35, 0.5)] == [1, 3, 4, 5, 2]
    assert [c.id for c in spread(cands, 0.35)] == [1, 2, 4, 5, 3]
    out = spread(cands, 0.0, 1.0)
    assert {c.id: c.score for c in out} == {c.id: c.score for c in cands}  # nothing added, dropped or rescored


async def test_turn_weight_applies_to_every_question_or_to_those_that_gather():
    one = "Which city did Jo visit in May?"
    cands = [_said(1, 1.0, "a", (1,)), _said(2, 0.9, "a", (1,)), _said(3, 0.8, "a", (2,))]
    assert SpreadConfig().turn_weight == 0.5 and SpreadConfig().turn_always  # the default (round 14): every question
    assert SessionSpread(SpreadConfig()).active(RecallContext(one))
    assert not SessionSpread(SpreadConfig(turn_weight=0.0)).active(RecallContext(one))  # off: as before
    stage = SessionSpread(SpreadConfig(weight=0.35, turn_weight=1.0))
    assert stage.active(RecallContext(one))
    assert [c.id for c in await run_stage(stage, cands, one)] == [1, 3, 2]  # no session discount for it
    gather_only = SessionSpread(SpreadConfig(weight=0.35, turn_weight=1.0, turn_always=False))
    assert not gather_only.active(RecallContext(one))
    assert [c.id for c in await run_stage(gather_only, cands, "Which cities has Jo visited?")] == [1, 3, 2]
    assert not SessionSpread(SpreadConfig(enabled=False, turn_weight=1.0)).active(RecallContext(one))
