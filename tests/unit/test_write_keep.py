"""What the write track keeps (issue 31, item 6): the rules, table-driven. The sentences here are not the bench's
labeled set (tests/fixtures/keep), so these check the rules' shape, and the bench measures them."""

from __future__ import annotations

import pytest

from app.models.tasks.extract_atomic_units import ExtractUnitsInput, extract_units_heuristic
from app.models.tasks.extract_triples import ExtractTriplesInput, extract_triples_heuristic
from app.models.tasks.resolve_conflict import resolve_conflict_heuristic, same_slot
from app.models.tasks.speech import deliberation, info_question, request, social
from app.write.dedup import Ask, Candidate, Dedup, Verdict
from app.write.gates.chatter import AssistantChatter


@pytest.mark.parametrize(("reply", "answered", "expected"), [
    ("Biscuit is such a cute name!", "Our puppy is called Biscuit.", True),
    ("Congratulations on the new job!", "I start at the library on Monday.", True),
    ("Happy to help. Let me know if you need anything else!", "Thanks, that worked.", True),
    ("Oh, I'm sorry to hear that.", "My flight got cancelled.", True),
    ("Good evening! What can I do for you?", "", True),
    ("恭喜你找到新工作！", "我找到新工作了。", True),
    ("¡Qué nombre tan bonito!", "Mi gata se llama Luna.", True),
    ("Quelle belle ville !", "J'habite à Nantes.", True),
    ("Herzlichen Glückwunsch!", "Ich habe die Prüfung bestanden.", True),
    # information, even when it opens with praise or is short
    ("Great question! Puppies need about 18 hours of sleep a day.", "How much do puppies sleep?", False),
    ("You could try the night ferry.", "How do I get to the island?", False),
    ("The library opens at 9.", "When does it open?", False),
    ("Use a cast-iron pan and preheat it for ten minutes before the steak goes in.", "How do I sear steak?", False),
    ("这家餐厅的招牌菜是红烧肉和清蒸鱼，周一休息。", "推荐一家餐厅。", False),
])
def test_social_turns_are_reactions_without_new_words(reply: str, answered: str, expected: bool) -> None:
    assert social(reply, answered) is expected


def test_the_chatter_gate_rejects_a_reaction_and_passes_an_answer() -> None:
    gate = AssistantChatter()
    rejected = gate("What a lovely name for a parrot!", "We named the parrot Kiwi.")
    assert not rejected.passed and rejected.rule == "noise.assistant_chatter" and rejected.gate == "noise"
    assert gate("Parrots like Kiwi need a cage at least 60 cm wide.", "We named the parrot Kiwi.").passed
    assert gate("Nice!", None).passed is False


@pytest.mark.parametrize(("sentence", "is_request", "is_info", "is_deliberation"), [
    ("Can you refactor billing/invoice.py so it uses the new client?", True, False, False),
    ("Please translate this into German.", True, False, False),
    ("Now make it shorter.", True, False, False),
    ("I'd like you to draft an email to my landlord.", True, False, False),
    ("帮我写一封感谢信。", True, False, False),
    ("你能推荐几本科幻小说吗？", True, False, False),
    ("¿Puedes resumir este capítulo?", True, False, False),
    ("Peux-tu corriger mon texte ?", True, False, False),
    ("Kannst du mir helfen?", True, False, False),
    ("How do I reset my router?", False, True, False),
    ("What's the difference between a latte and a flat white?", False, True, False),
    ("Should I sell my car or keep it for another year?", False, False, True),
    ("What about the handwritten receipts?", False, False, False),  # the user's open issue: an OpenQuestion
    ("I write poems on weekends.", False, False, False),
    ("My brother makes furniture.", False, False, False),
    ("Plan B is to take the train.", False, False, False),
])
def test_requests_questions_and_deliberations(sentence: str, is_request: bool, is_info: bool,
                                              is_deliberation: bool) -> None:
    assert request(sentence) is is_request
    assert info_question(sentence) is is_info
    assert deliberation(sentence) is is_deliberation


def _units(turns: list[tuple[str, str]]) -> list[tuple[str, str, list[int]]]:
    out = extract_units_heuristic(ExtractUnitsInput(turns=[{"role": r, "content": c} for r, c in turns]))
    return [(u.category, u.text, u.turns) for u in out.units]


def test_units_come_from_what_the_user_says_about_their_world() -> None:
    units = _units([
        ("user", "Our puppy is called Biscuit and she is a beagle."),
        ("assistant", "Biscuit is such a cute name!"),
        ("user", "Can you refactor billing/invoice.py so it uses the new client?"),
        ("user", "How do I reset my router?"),
        ("user", "Should I sell my car or keep it for another year?"),
        ("user", "Remind me to renew the car insurance by Friday."),
        ("user", "Sounds great, thanks!"),
    ])
    turns = {t for c, _, ts in units for t in ts if c != "Topic"}
    assert 0 in turns and 1 not in turns and 2 not in turns and 3 not in turns and 6 not in turns
    # a request or a lookup is at most a Topic (what the user brought up), never a claim or an OpenQuestion
    assert {c for c, _, ts in units if ts[0] in (2, 3)} <= {"Topic"}
    assert ("OpenQuestion", 4) in {(c, ts[0]) for c, _, ts in units}  # the user's own open question
    assert ("ActionItem", 5) in {(c, ts[0]) for c, _, ts in units}  # the user's own task, not a request
    assert not any(c == "OpenQuestion" and "refactor" in t for c, t, _ in units)


def test_between_two_people_a_question_stays_an_open_question() -> None:
    units = _units([("user", "Mel: How was the camping trip with the kids?"), ("user", "Jon: Tell me about it!")])
    assert ("OpenQuestion", [0]) in [(c, ts) for c, _, ts in units]  # no assistant in the session: no request


@pytest.mark.parametrize(("old", "new", "cosine", "supersede"), [
    ("I read on a Kindle Paperwhite.", "I switched to a Kobo because the Kindle stopped charging.", 0.5, True),
    ("I live in Porto.", "We moved to Braga in the summer.", 0.4, True),  # lives_in ~ moved_to, far below the band
    ("我住在成都。", "我们去年搬到重庆了。", 0.33, True),
    ("My bike is a Trek road bike.", "I no longer ride the Trek, I bought a gravel bike.", 0.45, True),
    ("Trabajo en un banco de Bilbao.", "Ya no trabajo en el banco; ahora soy autónoma.", 0.38, True),
    ("I use Python at work.", "I now use Neovim for everything.", 0.44, False),  # another slot: both hold
    ("Ana loves pottery.", "Ana now lives in Rome.", 0.45, False),  # the same person, another slot
    ("Mel: I paint landscapes on weekends.", "Mel: I started painting portraits now.", 0.5, False),  # speaker
    ("I live in Porto.", "I visited Braga in the summer.", 0.45, False),  # no change cue
    ("My sister Ana teaches math.", "We moved to Braga in the summer.", 0.2, False),  # unrelated
    ("Alice works at Acme.", "I moved to Lisbon in 2021 for a job at Acme.", 0.45, False),  # another subject
])
def test_a_change_supersedes_the_fact_in_its_slot(old: str, new: str, cosine: float, supersede: bool) -> None:
    assert (same_slot(old, new, cosine) is not None) is supersede
    judged = Dedup(llm=None).judge("unit", new, 1, [_candidate(old, cosine)])  # judge never calls the model
    if not supersede:
        assert isinstance(judged, Verdict) and judged.decision == "CREATE", judged
        return
    assert isinstance(judged, Ask)
    answer = resolve_conflict_heuristic(judged.payload)
    assert answer.action == "SUPERSEDE", answer


def _candidate(text: str, cosine: float, kind: str = "unit") -> Candidate:
    return Candidate(7, cosine, kind, "Fact", text, 0, False)


def test_dedup_asks_about_a_change_below_the_uncertain_band_only() -> None:
    dedup = Dedup(llm=None)  # judge never calls the model
    switch = "I switched to a Kobo because the Kindle stopped charging."
    asked = dedup.judge("unit", switch, 1, [_candidate("I read on a Kindle Paperwhite.", 0.5)])
    assert isinstance(asked, Ask) and asked.target.block_id == 7
    verdict = dedup.settle(asked, resolve_conflict_heuristic(asked.payload), switch)
    assert verdict.decision == "SUPERSEDE" and verdict.target == 7
    plain = dedup.judge("unit", "I bought a Kobo.", 1, [_candidate("I read on a Kindle Paperwhite.", 0.5)])
    assert isinstance(plain, Verdict) and plain.decision == "CREATE"
    chunk = dedup.judge("chunk", switch, 1, [_candidate("I read on a Kindle Paperwhite.", 0.5, kind="chunk")])
    assert isinstance(chunk, Verdict) and chunk.decision == "CREATE"  # raw turns are never superseded


@pytest.mark.parametrize(("text", "expected"), [
    ("My sister's name is Wen and she teaches pottery.", ("user's sister", "name", "Wen")),
    ("Our dog's name is Pepper.", ("user's dog", "name", "Pepper")),
    ("My name is Ana.", ("user", "name", "Ana")),
])
def test_a_possessive_gives_the_attribute_not_a_clause(text: str, expected: tuple[str, str, str]) -> None:
    triples = extract_triples_heuristic(ExtractTriplesInput(text=text)).triples
    got = [(t.subject, t.predicate, t.object) for t in triples]
    assert expected in got
    assert not any(" is " in o for _, _, o in got), got


def test_no_triple_has_a_clause_for_an_object() -> None:
    text = "Our app's backend is written in Kotlin. His team's lead was hired in May."
    got = extract_triples_heuristic(ExtractTriplesInput(text=text)).triples
    assert not any(" is " in t.object or " was " in t.object for t in got), got
