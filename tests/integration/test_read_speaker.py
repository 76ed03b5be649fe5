"""SpeakerMatch through recall: in a transcript among named people, a question about one of them gets their own
turns ahead of the other person's turns that only address them."""

from __future__ import annotations

from datetime import UTC, datetime

from app.read.config import ContinuityConfig, ReadConfig, RecallOptions, SpeakerConfig
from app.read.recall import ReadTrack
from app.write.sessions import SessionTrack, TurnIn

T0 = datetime(2024, 8, 10, 20, 0, tzinfo=UTC)

SESSIONS = {
    "family": ["Caroline: Melanie, how do you feel about your family supporting you so much?",
               "Melanie: They're a real support. I appreciate them a lot, they keep me going.",
               "Caroline: Thanks, Melanie! Families supporting each other is the best thing."],
    "pottery": ["Melanie: By the way, I signed up for a pottery class on Tuesday.",
                "Caroline: Nice! I started volunteering at the youth center downtown."],
    "trip": ["Caroline: The road trip to the coast was long but the sunsets were worth it.",
             "Melanie: We should plan a weekend at the lake with the kids next month."],
}


async def test_a_named_persons_own_turn_comes_before_turns_addressed_to_them(services, vault) -> None:
    for session, turns in SESSIONS.items():
        await SessionTrack(services).append_turns(vault, session, [TurnIn("user", t, T0) for t in turns])
    query = "How did Melanie feel about her family supporting her?"
    options = RecallOptions(k=5, thinking="fast", as_of=T0, use_prefetch=False, writeback=False)
    alone = ContinuityConfig(enabled=False)  # the speaker match alone, without the neighbours it would add
    off = await ReadTrack(services, ReadConfig(continuity=alone, speaker=SpeakerConfig(enabled=False))).recall(
        vault, query, options)
    on = await ReadTrack(services, ReadConfig(continuity=alone)).recall(vault, query, options)
    # Without the match, a turn that only addresses Melanie ranks first: her name and the topic's words are in it.
    assert off.cards[0].text.startswith("Caroline:")
    assert on.cards[0].text.startswith("Melanie: They're a real support")
    assert {e["stage"] for e in on.meta["events"]} >= {"speaker"}
    assert "speaker" in on.meta["stage_ms"]
