"""SpeakerMatch: who said a turn, which names a query holds, and the reordering."""

from __future__ import annotations

from app.read.config import SpeakerConfig
from app.read.search import Candidate
from app.read.speaker import SpeakerMatch, first_person, named, query_names, speaker_of
from tests.unit.read_stage import run_stage


def test_speaker_is_the_name_prefix_of_a_transcript_turn():
    assert speaker_of("Melanie: I ran a charity race last Saturday.") == "Melanie"
    assert speaker_of("  Dr. Jane Smith: take two a day") == "Dr. Jane Smith"
    assert speaker_of("user: Caroline: hi") is None  # a summary's role prefix is not a person
    assert speaker_of("I went camping: it was great") is None
    assert speaker_of("Remember the milk") is None


def test_query_names_and_matching():
    names = query_names("What did Melanie's kids like about Caroline’s painting?")
    assert {"Melanie", "Caroline"} <= names
    assert named("Melanie", names) and not named("Gina", names)
    assert named("Dr. Melanie Smith", names) and not named("Dr. Smith", names) and not named(None, names)


def _cand(i: int, score: float, text: str, source_kind: str = "user") -> Candidate:
    return Candidate(id=i, score=score, base=score, cosine=0.5, text=text, content=text, source_kind=source_kind)


async def test_the_named_persons_own_turns_rise_and_nobody_elses_change():
    cands = [_cand(1, 0.60, "Caroline: Thanks, Melanie! Your painting is lovely."),
             _cand(2, 0.50, "Caroline: Wow Melanie, that sounds relaxing!"),
             _cand(3, 0.40, "Melanie: Running longer has been great for my headspace."),
             _cand(4, 0.35, "Summary of the week")]
    events: list = []
    out = await run_stage(SpeakerMatch(), cands, "What does Melanie do to destress?", events)
    assert [c.id for c in out] == [3, 1, 2, 4]
    assert out[0].score == 0.40 * SpeakerConfig().weight and out[1].score == 0.60
    assert events == [{"stage": "speaker", "names": ["Melanie"], "boosted": 1}]


async def test_no_change_without_named_speakers_or_when_everyone_is_named():
    cands = [_cand(1, 0.6, "I like tea"), _cand(2, 0.5, "Melanie: I like coffee")]
    match = SpeakerMatch()
    assert await run_stage(match, cands, "What is the usual drink?", []) is cands  # no name in the query
    assert await run_stage(match, cands, "What does Gina drink?", []) is cands  # a name nobody speaks under
    both = [_cand(1, 0.6, "Caroline: tea"), _cand(2, 0.5, "Melanie: coffee")]
    assert await run_stage(match, both, "What did Caroline and Melanie drink?", []) is both
    assert await run_stage(SpeakerMatch(SpeakerConfig(enabled=False)), cands, "What does Melanie drink?") is cands


async def test_a_question_about_its_asker_prefers_the_users_own_turns():
    assert first_person("Can you suggest accessories for my phone?") and first_person("What did I decide?")
    assert first_person("我上次說了什麼？") and not first_person("What does Melanie like?")
    cands = [_cand(1, 0.60, "Here are gaming accessories for your new PS5: a headset, a stand.", "assistant"),
             _cand(2, 0.50, "The screen protector on my iPhone 13 Pro cracked, I need a new one."),
             _cand(3, 0.45, "Summary of the session", "assistant")]
    events: list = []
    out = await run_stage(SpeakerMatch(), cands, "Can you suggest some useful accessories for my phone?", events)
    weight = SpeakerConfig().first_person_weight
    assert [c.id for c in out] == [2, 1, 3] and out[0].score == 0.50 * weight
    assert events == [{"stage": "speaker", "first_person": 1}]
    # named transcript turns are their speaker's, not the asker's; a question about others changes nothing
    said = [_cand(1, 0.6, "Caroline: my painting"), _cand(2, 0.5, "Melanie: my pottery")]
    assert await run_stage(SpeakerMatch(), said, "What did I paint?", []) is said
    assert await run_stage(SpeakerMatch(), cands, "What does the assistant suggest?", []) is cands
