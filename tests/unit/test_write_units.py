"""Pure-Python parts of the write track: fingerprints, chunking, merging, entity resolution."""

from __future__ import annotations

import numpy as np
import pytest

from app.write.chunking import ChunkingConfig, chunk_turn
from app.write.dedup import merge_texts
from app.write.entities import EntityResolver, Known, acronym_inside, canonical_key, initials_match
from app.write.fingerprint import content_hash, hamming, simhash


@pytest.mark.parametrize(("a", "b", "max_bits"), [
    ("I moved to Taipei last week and I love it", "I moved to Taipei last week, and I love it!", 0),
    ("我住在台北市中山區", "我住在台北市中山區。", 0),
    ("The meeting is on 2026-03-12 at 10:00", "the meeting is on 2026-03-12 at 10:00", 0),
])
def test_simhash_near_identical_texts_are_close(a: str, b: str, max_bits: int) -> None:
    assert hamming(simhash(a), simhash(b)) <= max_bits


def test_simhash_different_texts_are_far() -> None:
    assert hamming(simhash("I moved to Taipei last week"), simhash("My favourite food is ramen noodles")) > 16


def test_simhash_fits_a_signed_bigint() -> None:
    for text in ["a", "hello world", "台北", "x" * 1000, ""]:
        assert -(2**63) <= simhash(text) < 2**63


def test_content_hash_ignores_case_width_and_spacing() -> None:
    assert content_hash("Hello  World") == content_hash("hello world")
    assert content_hash("ＡＢＣ") == content_hash("abc")
    assert content_hash("hello world") != content_hash("hello there")


def test_short_turn_is_one_chunk() -> None:
    assert chunk_turn("  I'm allergic to peanuts.  ") == ["I'm allergic to peanuts."]
    assert chunk_turn("   ") == []


def test_long_turn_splits_at_headings_and_paragraphs_not_mid_sentence() -> None:
    para = "This is a sentence about the garden. " * 12
    text = f"## Planting\n{para}\n\n{para}\n\n## Watering\n{para}"
    chunks = chunk_turn(text, ChunkingConfig(max_chars=600, min_chars=100))
    assert len(chunks) >= 3
    assert all(len(c) <= 600 + 100 for c in chunks)
    assert chunks[0].startswith("## Planting")
    assert any(c.startswith("## Watering") for c in chunks)
    assert all(c.rstrip().endswith((".", "!", "?")) for c in chunks)
    assert "".join(chunks).replace("\n", "").replace(" ", "") == text.replace("\n", "").replace(" ", "")


def test_merge_keeps_everything_either_text_says() -> None:
    assert merge_texts("I like green tea.", "I like green tea. I also like jasmine tea.") == \
        "I like green tea. I also like jasmine tea."
    assert merge_texts("I like green tea.", "I like green tea.") == "I like green tea."
    merged = merge_texts("Alice works at Acme.", "Alice leads the search team.")
    assert "Acme" in merged and "search team" in merged


@pytest.mark.parametrize(("a", "b"), [("ＣｈａｔＧＰＴ", "chatgpt"), ("José", "jose"), ("New-York", "new york"),
                                      ("The Beatles", "beatles")])
def test_canonical_key_folds_width_case_diacritics_and_punctuation(a: str, b: str) -> None:
    assert canonical_key(a) == canonical_key(b)


@pytest.mark.parametrize(("a", "b", "same"), [
    ("NYC", "New York City", True), ("j-hong", "Jones Hong", True), ("J. Hong", "JonesHong", True),
    ("Jones Hong", "Jane Hong", False), ("AI", "Apple Inc", True), ("NY", "New York City", False),
])
def test_initials(a: str, b: str, same: bool) -> None:
    assert initials_match(a, b) is same


def test_acronym_inside_a_longer_name() -> None:
    assert acronym_inside("GPT", "ChatGPT")
    assert not acronym_inside("gpt", "ChatGPT")  # lower case is not an acronym
    assert not acronym_inside("GPT", "Chat GPT model")


def test_resolver_uses_aliases_initials_acronyms_then_embeddings() -> None:
    e = np.eye(4, dtype=np.float32)
    known = [Known(1, "ChatGPT", "chatgpt", e[0]), Known(2, "New York City", "newyorkcity", e[1]),
             Known(3, "Jones Hong", "joneshong", e[2])]
    r = EntityResolver(known, {"chatgpt": 1, "newyorkcity": 2, "joneshong": 3})
    assert r.resolve("chat-gpt", None) == (1, "alias")
    assert r.resolve("GPT", None) == (1, "acronym")
    assert r.resolve("NYC", None) == (2, "initials")
    assert r.resolve("JonesHong", None) == (3, "alias")
    assert r.resolve("j-hong", None) == (3, "initials")
    near = (e[0] * 0.95 + e[3] * 0.31).astype(np.float32)
    assert r.resolve("OpenAI's chatbot", near / np.linalg.norm(near))[0] == 1
    assert r.resolve("Taipei", e[3]) == (None, "new")
    r.learn(9, "Taipei", e[3])
    assert r.resolve("taipei", None) == (9, "alias")


def test_a_small_tail_joins_its_neighbour() -> None:
    text = ("A sentence about planting tomatoes in the spring. " * 30) + "\n\nShort tail."
    chunks = chunk_turn(text, ChunkingConfig(max_chars=1600, min_chars=200))
    assert len(chunks) == 1 and chunks[0].endswith("Short tail.")


@pytest.mark.parametrize("text", ["Bob uses ChatGPT.", "The system administrator reset my password yesterday",
                                  "I asked ChatGPT to help me plan my trip"])
def test_short_ordinary_sentences_pass_the_guard(text: str) -> None:
    """The learned detector alone does not block a short sentence (its n-gram statistics are too thin)."""
    from app.write.gates.chain import SafetyGates

    assert SafetyGates().check(text).passed


def test_unit_extraction_keeps_units_within_15_words_when_tokens_hold_several_words() -> None:
    from app.models.tasks.base import get_task

    task = get_task("extract_atomic_units")
    text = ("* Avoid exposing your watch to extreme temperatures (above 140°F/60°C or below -20°F/-29°C), as this "
            "can damage the battery and the seals of the case over a long period of time.")
    out = task.heuristic(task.input_model(turns=[{"role": "user", "content": text}]))
    assert out.units
    task.output_model.model_validate(out.model_dump())  # every unit passes the 15-word validator
