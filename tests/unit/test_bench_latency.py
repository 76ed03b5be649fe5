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


def test_cpu_per_recall_is_process_plus_postgres() -> None:
    from app.bench.cpu import CpuMeter, CpuUse
    from app.bench.latency import _cpu_cell, cpu_ms

    meter = CpuMeter(db=None)
    meter.use["fast"] = CpuUse(writer_s=1.2, postgres_s=1.8)
    assert cpu_ms(meter, "fast", 200) == {"process": 6.0, "postgres": 9.0, "total": 15.0}
    assert _cpu_cell(cpu_ms(meter, "fast", 200)) == "15.0 (6.0 process + 9.0 PostgreSQL)"
    meter.use["slow"] = CpuUse(writer_s=0.5, postgres_s=None)  # a remote server: its backends not readable
    assert cpu_ms(meter, "slow", 10) == {"process": 50.0, "postgres": None, "total": None}
    assert "not readable" in _cpu_cell(cpu_ms(meter, "slow", 10))
    assert cpu_ms(meter, "none", 10) is None and _cpu_cell(None) == "n/a"


def test_the_writers_cpu_tells_its_screening_process_apart() -> None:
    from app.bench.cpu import CpuUse
    from app.bench.ingest import _cpu_line

    use = CpuUse(writer_s=1.3, postgres_s=0.3, children_s=0.5).per_item_ms(1000)
    assert use == {"writer": 1.3, "postgres": 0.3, "bound_per_s": 1250.0, "writer_child": 0.5}
    assert "writer 1.30 (its process 0.80 + the screening process 0.50), PostgreSQL 0.30" in _cpu_line(
        use, "memory", "memories")
    alone = CpuUse(writer_s=1.3, postgres_s=0.3).per_item_ms(1000)
    assert "writer_child" not in alone and "screening" not in _cpu_line(alone, "memory", "memories")


def test_a_fill_is_said_before_now_at_any_size() -> None:
    from datetime import timedelta

    from app.bench.corpus import FILL_END, FILL_START, FILL_STEP, fill_step

    assert fill_step(10_000) == fill_step(100_000) == FILL_STEP  # vaults kept from earlier runs resume as filled
    for n in (1_000_000, 10_000_000):
        assert FILL_START + fill_step(n) * n <= FILL_END
        assert fill_step(n) < timedelta(minutes=7)
