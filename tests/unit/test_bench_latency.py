"""bench latency's corpus: without the dev files it says so instead of looping forever."""

from pathlib import Path

import pytest

from app.bench.latency import corpus, texts
from app.errors import InvalidInput


def test_corpus_without_dev_files_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="no conversation text"):
        corpus(tmp_path / "missing.json.gz", tmp_path / "missing.json")


def test_texts_makes_n_from_a_few_sentences() -> None:
    made = list(texts(["a one", "b two", "c three"], 5))
    assert made == ["a one", "b two", "c three", "a one b two", "b two c three"]


def test_texts_stops_when_the_pairs_run_out() -> None:
    assert list(texts(["a one", "b two", "c three"], 100)) == [
        "a one", "b two", "c three", "a one b two", "b two c three", "a one c three"]
    assert list(texts([], 10)) == []


def test_texts_from_a_start_equals_the_tail_of_the_whole_sequence() -> None:
    sentences = [f"sentence {i}" for i in range(7)]
    whole = list(texts(sentences, 40))
    for start in range(0, 32):
        assert list(texts(sentences, 40, start)) == whole[start:], start
    assert list(texts(sentences, 5, 9)) == []
