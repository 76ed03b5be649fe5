"""CurrentFirst through recall, on a vault of conversations written through the write track: a count restated
later with a new value, and a frequency (a habit, a preference) restated, come back newest first when the question
asks how things stand now; two past events that are not an update keep the order the rest of the read track gave
them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.read.config import CurrentConfig, ReadConfig, RecallOptions
from app.read.recall import ReadTrack
from app.write.sessions import SessionTrack, TurnIn

T0 = datetime(2024, 8, 10, 20, 0, tzinfo=UTC)

SESSIONS = {  # session: (days before T0, turns)
    "followers-may": (12, [
        ("user", "Can Instagram Insights show which posts perform well? I've got 1250 followers on Instagram now."),
        ("assistant", "Yes: Insights shows reach and engagement per post for business and creator accounts.")]),
    "followers-june": (9, [
        ("user", "I'm writing a caption for a post about the design fair. Checking my follower count, I think "
                 "I'm close to 1300 now."),
        ("assistant", "A question in the caption invites comments; keep it short and end with a call to action.")]),
    "coffee-old": (12, [("user", "How much coffee is too much? I drink coffee twice a day."),
                        ("assistant", "Two cups a day is within what most guidelines consider moderate.")]),
    "coffee-new": (9, [("user", "My sleep got better since I cut my coffee down to once a day."),
                       ("assistant", "Cutting the afternoon cup often helps sleep.")]),
    "run-monday": (20, [("user", "I ran 5 miles on Monday along the river path."),
                        ("assistant", "Great pace for a weekday run.")]),
    "run-tuesday": (19, [("user", "I ran 3 miles on Tuesday, my legs were tired."),
                         ("assistant", "A shorter recovery run is a good idea after a long one.")]),
    "other": (10, [("user", "My sister is visiting next weekend and we want to try the new ramen place."),
                   ("assistant", "Book ahead: new ramen places fill up on weekends.")]),
}


@pytest.fixture
async def conversations(services, vault):
    track = SessionTrack(services)
    for session, (days, turns) in SESSIONS.items():
        at = T0 - timedelta(days=days)
        await track.append_turns(vault, session, [TurnIn(r, t, at) for r, t in turns])
    return vault


async def _sessions(services, vault, query: str, enabled: bool) -> tuple[list[str], dict]:
    options = RecallOptions(k=8, thinking="fast", as_of=T0, use_prefetch=False, writeback=False)
    result = await ReadTrack(services, ReadConfig(current=CurrentConfig(enabled=enabled))).recall(
        vault, query, options)
    return list(dict.fromkeys(c.session_id for c in result.cards)), result.meta


def _before(order: list[str], a: str, b: str) -> bool:
    return a in order and b in order and order.index(a) < order.index(b)


async def test_a_count_restated_later_comes_first(services, conversations) -> None:
    query = "How many followers do I have on Instagram now?"
    off, _ = await _sessions(services, conversations, query, enabled=False)
    on, meta = await _sessions(services, conversations, query, enabled=True)
    # The older turn repeats the question's words and ranks first without the stage.
    assert _before(off, "followers-may", "followers-june")
    assert _before(on, "followers-june", "followers-may")
    assert any(e["stage"] == "current" and e["moved"] >= 1 for e in meta["events"])


async def test_a_habit_restated_with_a_new_frequency_comes_first(services, conversations) -> None:
    query = "How often do I drink coffee?"
    off, _ = await _sessions(services, conversations, query, enabled=False)
    on, _ = await _sessions(services, conversations, query, enabled=True)
    assert _before(off, "coffee-old", "coffee-new")  # the older turn repeats the question's words
    assert _before(on, "coffee-new", "coffee-old")


async def test_past_events_and_questions_about_the_past_keep_their_order(services, conversations) -> None:
    runs = "How many miles do I run along the river path?"
    for query in (runs, "How many followers did I have on Instagram in June?"):
        off, _ = await _sessions(services, conversations, query, enabled=False)
        on, _ = await _sessions(services, conversations, query, enabled=True)
        assert on == off, query
        if query == runs:  # Monday's run, said first and ranked first, is not updated by Tuesday's
            assert _before(on, "run-monday", "run-tuesday")
