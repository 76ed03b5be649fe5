"""Chunking that always fits (issue 21): every chunk of any turn is within ``max_chars`` (so within the item limit)
whatever the text, keeps all of it, and never cuts inside a grapheme cluster. Property-based (hypothesis), with the
shapes real files carry: no spaces, one 50,000-character token, code, base64, CJK without punctuation, emoji runs."""

from __future__ import annotations

import base64

import regex
from hypothesis import example, given, settings
from hypothesis import strategies as st

from app.settings import Settings
from app.write.chunking import ChunkingConfig, chunk_turn

GRAPHEME = regex.compile(r"\X")
ITEM_LIMIT = Settings().max_content_chars
EMOJI = ["👨‍👩‍👧‍👦", "🇹🇼", "👍🏽", "❤️", "🏳️‍🌈", "😀", "e\u0301", "நி", "🧑🏿‍🚀"]
CJK = st.text(st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF), min_size=1, max_size=3000)


def _token(alphabet: str) -> st.SearchStrategy[str]:
    return st.integers(1, 60_000).map(lambda n: (alphabet * (n // len(alphabet) + 1))[:n])


SHAPES = st.one_of(
    st.text(min_size=1, max_size=5000),  # anything unicode
    _token("x"),  # one long token, up to 60,000 characters
    st.binary(min_size=1, max_size=30_000).map(lambda b: base64.b64encode(b).decode()),
    CJK.map(lambda t: t * 12),  # CJK without punctuation
    st.lists(st.sampled_from(EMOJI), min_size=1, max_size=8000).map("".join),  # emoji runs
    st.integers(1, 400).map(lambda n: "def f(x):\n    return {'k': [x] * 3}\n" * n),  # code
    st.integers(1, 300).map(lambda n: "col_a,col_b,col_c,col_d,col_e,col_f\n" * n + "a" * n * 90),  # CSV + run
    st.lists(st.sampled_from(["word", " ", "\n", "\n\n", "# Head\n", ".", "。", "🇹🇼", "x" * 2500]),
             min_size=1, max_size=400).map("".join),  # mixed structure
)


def _graphemes(text: str) -> list[str]:
    return GRAPHEME.findall(text)


@settings(max_examples=120, deadline=None)
@given(SHAPES)
@example("x" * 50_000)
@example("中文" * 20_000)
@example("👨‍👩‍👧‍👦" * 5000)
@example(base64.b64encode(bytes(range(256)) * 120).decode())
def test_every_chunk_fits_and_all_of_the_text_is_kept(text: str) -> None:
    cfg = ChunkingConfig()
    chunks = chunk_turn(text, cfg)
    if not text.strip():
        assert chunks == []
        return
    assert chunks and all(c.strip() for c in chunks)
    assert max(len(c) for c in chunks) <= cfg.max_chars + 2 + cfg.min_chars <= ITEM_LIMIT  # a tail may join
    # nothing lost or reordered but whitespace
    assert "".join("".join(c.split()) for c in chunks) == "".join(text.split())


@settings(max_examples=80, deadline=None)
@given(st.one_of(_token("ab"), CJK.map(lambda t: t * 12),
                 st.lists(st.sampled_from(EMOJI), min_size=1, max_size=8000).map("".join)))
@example("x" * 50_000)
@example("🇹🇼👍🏽" * 4000)
@example("e\u0301" * 9000)
def test_a_run_without_spaces_is_cut_between_grapheme_clusters(text: str) -> None:
    chunks = chunk_turn(text)
    assert "".join(chunks) == text.strip()
    assert [g for c in chunks for g in _graphemes(c)] == _graphemes(text.strip())
    assert max(len(c) for c in chunks) <= ChunkingConfig().max_chars + 2 + ChunkingConfig().min_chars


def test_the_longmemeval_turn_that_left_a_31122_character_chunk() -> None:
    # the shape of the failing turn: a long stretch without any boundary the chunker split on
    text = "Here is the data:\n\n" + ",".join(f"field{i}" for i in range(4000))
    assert len(text) > 31_000
    chunks = chunk_turn(text)
    assert max(len(c) for c in chunks) <= ChunkingConfig().max_chars
