"""Benchmark knobs are not the service's settings (issue 33, item 4): ``BenchSettings`` reads MEMVAULT_BENCH_DB and
MEMVAULT_BENCH_GRAPH, the service's ``Settings`` has no benchmark field and ignores those variables."""

from __future__ import annotations

from app.settings import BenchSettings, Settings


def test_the_service_settings_carry_no_benchmark_knob(monkeypatch) -> None:
    monkeypatch.setenv("MEMVAULT_BENCH_DB", "bench_elsewhere")
    monkeypatch.setenv("MEMVAULT_BENCH_GRAPH", "1")
    assert not [name for name in Settings.model_fields if name.startswith("bench")]
    bench = BenchSettings()
    assert (bench.bench_db, bench.bench_graph) == ("bench_elsewhere", True)


def test_benchmark_defaults(monkeypatch) -> None:
    monkeypatch.delenv("MEMVAULT_BENCH_DB", raising=False)
    monkeypatch.delenv("MEMVAULT_BENCH_GRAPH", raising=False)
    assert (BenchSettings().bench_db, BenchSettings().bench_graph) == ("memvault_bench", False)


def test_the_benchmarks_read_their_own_settings(monkeypatch) -> None:
    from app.bench.runtime import bench_settings, conditions_note

    monkeypatch.setenv("MEMVAULT_BENCH_GRAPH", "true")
    assert bench_settings().bench_graph and "graph built" in conditions_note()
    monkeypatch.setenv("MEMVAULT_BENCH_GRAPH", "false")
    assert "graph built" not in conditions_note() and "graph built" in conditions_note(graph=True)
