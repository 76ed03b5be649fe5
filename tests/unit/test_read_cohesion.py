"""SessionCohesion: a session many of the best candidates come from gains over a lone match."""

from __future__ import annotations

import pytest

from app.read.cohesion import SessionCohesion
from app.read.config import CohesionConfig
from app.read.search import Candidate
from tests.unit.read_stage import run_stage


def _cand(i: int, score: float, session: str | None) -> Candidate:
    return Candidate(id=i, score=score, base=score, cosine=0.5, text=f"m{i}", content=f"m{i}", session_id=session)


async def test_the_session_that_keeps_coming_back_overtakes_a_lone_match():
    cands = [_cand(1, 1.00, "movies"),  # one turn sharing a word with the question
             _cand(2, 0.95, "guitar"), _cand(3, 0.90, "guitar"), _cand(4, 0.85, "guitar"),
             _cand(5, 0.50, "bikes")]
    events: list = []
    out = await run_stage(SessionCohesion(), cands, events=events)
    assert [c.id for c in out] == [2, 3, 4, 1, 5]
    w = CohesionConfig().weight
    assert out[0].score == pytest.approx(0.95 * (1 + w * (0.90 + 0.85)))  # support: the others' share of the best
    assert next(c for c in out if c.id == 1).score == 1.00  # alone in its session: unchanged
    assert events == [{"stage": "cohesion", "lifted": 3, "sessions": 1}]


async def test_support_is_capped_and_counted_over_the_top_only():
    many = [_cand(i, 1.0, "s") for i in range(1, 12)]
    out = await run_stage(SessionCohesion(CohesionConfig(cap=2.0)), many, events=[])
    assert all(c.score == pytest.approx(1.0 * (1 + 0.1 * 2.0)) for c in out)
    # a candidate outside the top gains from its session's members inside it; they gain nothing from it
    cands = [_cand(1, 1.0, "a"), _cand(2, 0.9, "b"), _cand(3, 0.2, "a")]
    out = {c.id: c.score for c in await run_stage(SessionCohesion(CohesionConfig(top=2)), cands, events=[])}
    assert out == {1: 1.0, 2: 0.9, 3: pytest.approx(0.2 * 1.1)}


async def test_no_change_without_sessions_shared_or_when_disabled():
    cohesion = SessionCohesion()
    lone = [_cand(1, 0.9, "a"), _cand(2, 0.8, "b"), _cand(3, 0.7, None), _cand(4, 0.6, None)]
    assert await run_stage(cohesion, lone, events=[]) is lone  # no session twice; memories without a session never pair up
    assert await run_stage(cohesion, [_cand(1, 0.9, "a")], events=[]) == [_cand(1, 0.9, "a")]
    pair = [_cand(1, 0.9, "a"), _cand(2, 0.8, "a")]
    assert await run_stage(SessionCohesion(CohesionConfig(enabled=False)), pair, events=[]) is pair
    assert await run_stage(SessionCohesion(CohesionConfig(weight=0)), pair, events=[]) is pair
