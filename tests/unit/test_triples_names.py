"""Names with titles and initials stay whole in the heuristic triple extraction (the graph's entities): "Dr. Lin"
is one entity, not "Dr"; a sentence that ends after a single letter still ends there."""

from __future__ import annotations

import pytest

from app.models.tasks.extract_triples import ExtractTriplesInput, extract_triples_heuristic


def triples(text: str) -> list[tuple[str, str, str]]:
    out = extract_triples_heuristic(ExtractTriplesInput(text=text, speaker="user")).triples
    return [(t.subject, t.predicate, t.object) for t in out]


@pytest.mark.parametrize(("text", "expected"), [
    ("I moved to Tainan last week; my dentist is Dr. Lin.",
     [("user", "moved_to", "Tainan"), ("user's dentist", "is", "Dr. Lin")]),
    ("Dr. Lin works at Chang Gung Hospital.", [("Dr. Lin", "works_at", "Chang Gung Hospital")]),
    ("My favourite author is J. R. R. Tolkien.", [("user", "favourite_author", "J. R. R. Tolkien")]),
    ("I moved to St. Louis last year.", [("user", "moved_to", "St. Louis")]),
    ("My boss is John F. Kennedy.", [("user's boss", "is", "John F. Kennedy")]),
    ("I live in Plan B. Then I moved.", [("user", "lives_in", "Plan B")]),  # a sentence's end, not an initial
    ("I use version B. It works.", [("user", "uses", "version B")]),
])
def test_titles_and_initials_stay_in_the_name(text: str, expected: list[tuple[str, str, str]]) -> None:
    assert triples(text) == expected
