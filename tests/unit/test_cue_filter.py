"""The cue lists' literal screen (app/models/tasks/cue_filter.py; issue 33, session close round 4): a text the
screen turns away is one no cue of the list matches, case-insensitively, whatever its characters; a text it lets
through is searched as before. Checked against the regexes themselves on texts built from the cues' own words and
the characters where lower-casing and ``re.I`` part ways."""

from __future__ import annotations

import re
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from app.models.tasks import speech
from app.models.tasks.cue_filter import absent, list_needed, literal_screen, needed, plain
from app.models.tasks.extract_atomic_units import CUES
from app.models.tasks.resolve_conflict import CHANGE_CUES, SWITCH_CUES
from app.models.tasks.text import _has_any
from app.write.gates import noise

LISTS = {**{k: tuple(v) for k, v in CUES.items()}, "change": tuple(CHANGE_CUES), "switch": tuple(SWITCH_CUES),
         "social": (speech.SOCIAL_PHRASES.pattern,)}
# Words of the cues (and near misses), and the characters that fold differently: "ſ" and "K" (Kelvin) match "s"
# and "k" under re.I, "İ" matches "i", "é" is cased and non-ASCII, "’" and CJK have no case.
PIECES = sorted({w for cues in LISTS.values() for c in cues for w in re.findall(r"[A-Za-z'’]+|[^\x00-\x7f]", c)}
                | {"I", "We", "DECIDED", "Let's", "ſ", "\u212a", "\u0130", "\u0131", "é", "É", "’", "。", "?", ":",
                   "maybe", "Remind", "Anymore", "quit", "not", "no", "topic"})
# ... and the cues' words with one letter swapped for a character re.I matches it with ("muſt", "İ", "thinK").
TRICKY = {"s": "ſ", "k": "\u212a", "i": "\u0130", "I": "\u0131"}
PIECES += sorted({w.replace(a, b, 1) for w in PIECES for a, b in TRICKY.items() if a in w})
texts = st.lists(st.one_of(st.sampled_from(PIECES), st.sampled_from([" ", " ", ", ", ". ", "-", "'"])),
                 max_size=14).map("".join)


def _searched(text: str, cues: tuple[str, ...]) -> tuple[str, ...]:
    """The cues that match, every one searched (what ``has_any`` answered before the screen)."""
    return tuple(c for c in cues if re.search(c, text, re.I))


@settings(max_examples=400, deadline=None)
@given(text=texts)
def test_screen_turns_away_only_texts_no_cue_matches(text: str) -> None:
    for name, cues in LISTS.items():
        screen = literal_screen(cues)
        if absent(screen, text):
            assert _searched(text, cues) == (), (name, text)
        if name != "social":
            assert _has_any(text, cues) == _searched(text, cues), (name, text)


def test_every_list_has_a_screen_and_it_answers_as_the_regexes() -> None:
    for name, cues in LISTS.items():
        assert list_needed(cues) is not None, name  # else the screen would never skip a search
    cases = ["I've decided to go with the blue one", "We will go with it", "Maybe next week", "remind me at 5",
             "deciſion", "I have DECIDED", "I ha\u212ae to go", "İ think so", "I wonder", "no longer", "désormais",
             "Me mudé a Madrid", "我决定了", "Let’s use vim", "Topic: pets", "re: the trip", "nothing here", ""]
    for text in cases:
        for name, cues in LISTS.items():
            assert _has_any(text, cues) == _searched(text, cues) or name == "social", (name, text)


def test_what_the_screen_refuses_to_judge() -> None:
    # "ſ" matches "s" under re.I, but lower-casing keeps it: a text holding it is searched, not screened.
    assert re.search(r"\bmust\b", "muſt", re.I) and "must" not in "muſt".lower()
    assert not plain("muſt") and not plain("Straße\u0130") and plain("Let’s go 我们") and plain("plain ascii")
    assert not absent(literal_screen((r"\bmust\b",)), "muſt")
    # a needed string with a letter ASCII matches under re.I ("ſ" for "s") gives no screen; "é" keeps one
    assert needed("muſt") is None and needed(r"\bdésormais\b") == frozenset({"désormais"})
    assert needed(r"a?") is None and needed(r"\w+") is None and needed(r"\w+ing") == frozenset({"ing"})
    assert list_needed((r"\bmust\b", r"[a-z]+")) is None


def test_needed_strings() -> None:
    assert needed(r"\b(i|we)('ll| will) go with\b") == frozenset(
        {"i'll go with", "i will go with", "we'll go with", "we will go with"})
    assert needed(r"\bwhat'?s up\b") == frozenset({"whats up", "what's up"})
    assert needed(r"\bnot\b.{0,30}\bany ?more\b") == frozenset({"any more", "anymore"})
    assert needed(r"(?<!n't )(?<!not )\bquit\b") == frozenset({"quit"})  # a look-behind consumes nothing
    assert needed(r"(ab){1,3}c") == frozenset({"abc", "ababc", "abababc"})
    assert needed(r"^(Topic|Re)\s*[:：]") == frozenset({"topic", "re"})


def _fold_slow(word: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", word.lower()) if not unicodedata.combining(c))


@settings(max_examples=300, deadline=None)
@given(word=st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=20)
       | st.sampled_from(["Glückwunsch", "ánimo", "ÀÉÎ", "İstanbul", "ﬁne"]))
def test_fold_fast_path_is_the_fold(word: str) -> None:
    assert speech._fold.__wrapped__(word) == _fold_slow(word)


@settings(max_examples=300, deadline=None)
@given(tok=st.text(alphabet="aeiouyqwrtsdfghjklzxcvbnmASDFQWER", min_size=5, max_size=14))
def test_mash_token_as_before(tok: str) -> None:
    low = tok.lower()
    before = (sum(low.count(v) for v in "aeiouy") / len(low) < 0.12 or any(r in low for r in noise._KEY_RUNS)
              or (len(low) >= 8 and len(set(low)) <= 3))
    assert noise._mash_token(tok) == before
