"""Atomic units keep a value with what it is about (compress), and the one list of value patterns (values.py)
reads text alike in Python and in PostgreSQL."""

from __future__ import annotations

import pytest

from app.models.tasks.extract_atomic_units import MAX_WORDS, ExtractUnitsInput, compress, extract_units_heuristic
from app.models.tasks.text import word_count
from app.models.tasks.values import separate_events, values


@pytest.mark.parametrize(("sentence", "value", "about"), [
    # the value late in a long sentence, after a dash
    ("By the way, I've been meaning to check my current follower count - I think I'm close to 1300 now.",
     "1300", "follower"),
    # a frequency in a relative clause: the clause alone would lose its yoga
    ("Oh, and I've noticed that I'm more focused on days when I attend yoga classes, which is three times a week "
     "- it really helps me clear my head.", "three times a week", "yoga"),
    # a model number and a duration side by side
    ("Speaking of tracking my health, I just realized I've been using my Fitbit Charge 3 for 9 months now - it's "
     "crazy how time flies!", "9 months", "Fitbit"),
    # a count in the middle, a list after it
    ("Since I'll have four bikes with me on this trip I'll book rooms with bike storage for my road bike, mountain "
     "bike, commuter bike and the new hybrid bike I just purchased.", "four bikes", "have"),
    # a range and a unit
    ("I've been spending a lot of time on my abstract ocean sculpture lately and so far I've already put in 10-12 "
     "hours of work on the base alone.", "10-12 hours", "sculpture"),
    # a number with a thousands separator, in a question
    ("Do you think my current road bike is ready for that distance considering that I've already done 2,000 "
     "miles on it this year?", "2,000 miles", "distance"),
    # a date
    ("I was told by the landlord at the viewing last week that the new lease on the flat starts on 2024-09-01 "
     "and runs for one year.", "2024-09-01", "lease"),
])
def test_a_value_stays_with_what_it_is_about(sentence: str, value: str, about: str) -> None:
    units = compress(sentence)
    assert all(word_count(u) <= MAX_WORDS for u in units), units
    holding = [u for u in units if value in u]
    assert holding, units  # the value is not cut from its unit / measure
    assert any(about in u for u in holding), units  # and what it counts is in the same unit
    # nothing dropped: every word of the sentence but fillers and leading asides is in some unit
    text = " ".join(units).lower()
    for w in ("1300", "week", "months", "purchased", "base", "year", "one year"):
        if w in sentence.lower():
            assert w in text, (w, units)


def test_the_units_of_a_session_keep_the_value_and_its_category() -> None:
    turn = ("I'm looking to create a new Instagram post about a recent industry event I attended. By the way, I've "
            "been meaning to check my current follower count - I think I'm close to 1300 now.")
    units = extract_units_heuristic(ExtractUnitsInput(turns=[{"role": "user", "content": turn}])).units
    with_value = [u for u in units if "1300" in u.text]
    assert len(with_value) == 1 and "follower count" in with_value[0].text and with_value[0].turns == [0]


def test_short_sentences_and_sentences_without_values_are_unchanged() -> None:
    assert compress("I have two cats.") == ["I have two cats."]
    long = ("We decided to use Tesseract for the first version, because the budget is only 500 dollars.")
    assert compress(long) == ["We decided to use Tesseract for the first version", "The budget is only 500 dollars."]


def test_values() -> None:
    assert values("yoga twice a week, then 3 times; 2,000 miles on 2024-05-05 at 9:30 in March") == {
        "twice", "3", "2,000", "2024-05-05", "9:30", "march"}
    assert values("I may go, someone often said so") == set()  # "may", "one" inside words: not values
    assert separate_events("I ran 5 miles on Monday.", "I ran 3 miles on Tuesday.", {"5", "monday"},
                           {"3", "tuesday"})
    assert not separate_events("I go to yoga twice a week.", "I go three times a week.", {"twice"}, {"three"})
