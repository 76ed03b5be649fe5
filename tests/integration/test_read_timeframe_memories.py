"""Stage 1 with a question's timeframe (issue 21): a memory is inside the window when it was said in it or names
a date in it (its normalized dates, resolved against when it was said), and a window no candidate comes near is
not read at all: plain recency, as if the question named no time."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from app.read.config import ScoringConfig
from app.write.sessions import SessionTrack, TurnIn

SAID = datetime(2023, 6, 9, 14, 0, tzinfo=UTC)
TURNS = [("s-talk", datetime(2023, 6, 9, 14, 0, tzinfo=UTC), "Caroline: I gave a talk at a school last week."),
         ("s-inside", datetime(2023, 6, 5, 10, 0, tzinfo=UTC), "Caroline: The garden is blooming this morning."),
         ("s-later", datetime(2023, 7, 20, 10, 0, tzinfo=UTC), "Caroline: I gave a talk at the library.")]


async def _stage1(services, vault, window: tuple[str, str] | None, **extra: float) -> dict[str, float]:
    track = SessionTrack(services)
    rows = await services.db.fetchall("SELECT id, session_id FROM memvault.block WHERE vault_id = %s AND kind = "
                                      "'chunk'", (vault.id,), vault_id=vault.id)
    if not rows:
        for sid, said, text in TURNS:
            await track.append_turns(vault, sid, [TurnIn("user", text, said)])
        rows = await services.db.fetchall("SELECT id, session_id FROM memvault.block WHERE vault_id = %s AND "
                                          "kind = 'chunk'", (vault.id,), vault_id=vault.id)
    cfg = ScoringConfig().params()
    if window:
        cfg.update(window_start=window[0], window_end=window[1])
    cfg.update(extra)
    qvec = services.embedder.embed_query("When did Caroline give a talk?")
    async with services.db.transaction(vault.id) as conn:
        cur = await conn.execute("SELECT id, factors FROM memvault.score_candidates_v2(%s, %s, %s, %s, NULL, "
                                 "%s::jsonb, 50)", ([r["id"] for r in rows], [1.0] * len(rows), qvec,
                                                    datetime(2023, 7, 30, tzinfo=UTC), json.dumps(cfg)))
        factors = {r["id"]: r["factors"]["RecencyBoost"] for r in await cur.fetchall()}
    return {r["session_id"]: factors[r["id"]] for r in rows}


async def test_a_memory_naming_a_date_in_the_window_is_inside_it(services, vault):
    cfg = ScoringConfig()
    f = await _stage1(services, vault, ("2023-06-02T00:00:00+00:00", "2023-06-09T00:00:00+00:00"))
    # said 9 June, a day after the window, but "last week" names the week of 29 May: inside
    assert f["s-talk"] == 1 + cfg.window_w
    assert f["s-inside"] == 1 + cfg.window_w  # said inside it
    assert f["s-later"] < 1.01  # six weeks later, naming no date in it


async def test_a_window_no_memory_is_near_changes_nothing(services, vault):
    plain = await _stage1(services, vault, None)
    far = await _stage1(services, vault, ("2019-07-01T00:00:00+00:00", "2019-07-02T00:00:00+00:00"))
    assert far == plain  # "4 years ago": no memory is from then, so recency ranks as without a frame


async def test_a_when_question_prefers_memories_that_say_when(services, vault):
    plain = await _stage1(services, vault, None)
    dated = await _stage1(services, vault, None, dated_w=0.5)
    assert dated["s-talk"] == pytest.approx(plain["s-talk"] * 1.5)  # "last week": it names a time
    assert dated["s-later"] == plain["s-later"]  # names none
