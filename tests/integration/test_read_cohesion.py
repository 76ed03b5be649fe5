"""SessionCohesion through recall: the conversation a question is about, found turn after turn, comes before a
lone turn of another conversation that shares the question's words."""

from __future__ import annotations

from datetime import UTC, datetime

from app.read.config import CohesionConfig, ContinuityConfig, ReadConfig, RecallOptions, SpeakerConfig
from app.read.recall import ReadTrack
from app.write.sessions import SessionTrack, TurnIn

T0 = datetime(2024, 8, 10, 20, 0, tzinfo=UTC)

SESSIONS = {
    "guitar": [("user", "I'm considering upgrading from a Fender Stratocaster to a Gibson Les Paul."),
               ("assistant", "The Les Paul has humbuckers and a heavier mahogany body; the Stratocaster is brighter."),
               ("user", "Is the Les Paul good for blues and rock guitar solos?"),
               ("assistant", "Yes: its sustain and warm tone suit blues and rock guitar solos well."),
               ("user", "Should I try the guitar with heavier strings, and does the neck feel different?"),
               ("assistant", "A Les Paul neck is often chunkier; try both guitars in the store before you buy.")],
    "movies": [("user", "I'm looking for movie recommendations this weekend, my new soundbar makes music and films "
                        "sound great at home.")],
    "bike": [("user", "My road bike needs new brake pads before the weekend ride."),
             ("assistant", "Check the pad wear line and replace them in pairs.")],
}


async def test_the_conversation_found_turn_after_turn_comes_first(services, vault) -> None:
    for session, turns in SESSIONS.items():
        await SessionTrack(services).append_turns(vault, session, [TurnIn(r, t, T0) for r, t in turns])
    query = "I'm visiting the music store this weekend. Any tips on what to look for in a new guitar?"
    options = RecallOptions(k=6, thinking="fast", as_of=T0, use_prefetch=False, writeback=False)
    alone = dict(continuity=ContinuityConfig(enabled=False), speaker=SpeakerConfig(enabled=False))
    off = await ReadTrack(services, ReadConfig(cohesion=CohesionConfig(enabled=False), **alone)).recall(
        vault, query, options)
    on = await ReadTrack(services, ReadConfig(**alone)).recall(vault, query, options)
    # Without it, the lone turn that shares "music" and "this weekend" with the question ranks first.
    assert off.cards[0].session_id == "movies"
    assert on.cards[0].session_id == "guitar"
    assert [c.session_id for c in on.cards].index("movies") > [c.session_id for c in off.cards].index("movies")
    assert any(e["stage"] == "cohesion" for e in on.meta["events"])
    assert "cohesion" in on.meta["stage_ms"]
