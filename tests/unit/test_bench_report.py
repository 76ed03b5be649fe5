"""The report's markdown and plots from canned results (no database), and the write track's stage clock."""

from __future__ import annotations

import time

from app.bench.locomo import summarize as locomo_summary
from app.bench.longmemeval import summarize as lme_summary
from app.bench.harness import IngestStats
from app.bench.plots import lme_curves, locomo_curve, write_plots
from app.bench.report import render
from app.write.timing import StageClock


def _lme_details():
    keys = ("recall_any@5", "recall_any@10", "recall_all@5", "recall_all@10", "ndcg@10")
    a = {"question_id": "a", "type": "t1", "ms": 10.0, "tokens@10": 100, "gold": ["s1"], "ranked": ["s0", "s1"],
         **dict(zip(keys, (1.0, 1.0, 1.0, 1.0, 0.63), strict=True))}
    b = {"question_id": "b", "type": "t2", "ms": 30.0, "tokens@10": 300, "gold": ["s1", "s9"], "ranked": ["s1"],
         **dict(zip(keys, (1.0, 1.0, 0.0, 0.0, 0.61), strict=True))}
    return [a, b]


def _locomo_details():
    return [{"category": 4, "ms": 5.0, "tokens@10": 50, "recall@5": 0.5, "recall@10": 1.0, "recall@25": 1.0,
             "text_recall@10": 0.5, "curve": [0.0] * 4 + [0.5] * 5 + [1.0] * 16},
            {"category": 5, "ms": 7.0, "tokens@10": 70, "recall@5": 0.0, "recall@10": 0.0, "recall@25": 0.0,
             "text_recall@10": 0.0, "curve": [0.0] * 25}]


def test_summaries_and_curves():
    lme = lme_summary(_lme_details(), IngestStats(100, 2.0))
    assert lme["recall_all@5"] == 0.5 and lme["questions"] == 2 and lme["ingest_turns_per_s"] == 50.0
    assert lme["recall_p50_ms"] == 20.0 and lme["by_type"]["t2"]["recall_all@10"] == 0.0
    any_k, all_k = lme_curves(_lme_details(), 3)
    assert any_k == [0.5, 1.0, 1.0] and all_k == [0.0, 0.5, 0.5]
    loc = locomo_summary(_locomo_details(), IngestStats(10, 1.0))
    assert loc["questions"] == 1 and loc["recall@5"] == 0.5 and loc["text_recall@10"] == 0.5 and loc["by_category"]["5"]["questions"] == 1
    assert locomo_curve(_locomo_details())[9] == 1.0


def test_render_and_plots(tmp_path):
    runs = {"pipelines": ["dense", "full"], "timings_s": {"longmemeval": 1.0}, "notes": {"guard": "skipped"},
            "outputs": {}, "total_s": 3.0,
            "longmemeval": {p: lme_summary(_lme_details(), IngestStats(100, 2.0)) for p in ("dense", "full")},
            "locomo": {p: locomo_summary(_locomo_details(), IngestStats(10, 1.0)) for p in ("dense", "full")},
            "latency": [
                {"memories": 1000, "fast_p50_ms": 5, "fast_p95_ms": 9, "slow_p50_ms": 20, "slow_p95_ms": 40},
                {"memories": 10000, "fast_p50_ms": 8, "fast_p95_ms": 15, "slow_p50_ms": 30,
                 "slow_p95_ms": 60}]}
    images = write_plots(runs, tmp_path / "img")
    assert set(images) == {"lme", "locomo", "latency"}
    assert all(p.stat().st_size > 1000 for p in images.values())
    md = render(runs, images, tmp_path)
    assert "| full | 1.000 | 1.000 | 0.500 | 0.500 |" in md
    assert "| full | 0.500 | 1.000 | 1.000 | 0.500 |" in md  # LoCoMo @5 / @10 / @25 / by text alone
    assert "0.706" in md and "DRAGON" in md and "Zep" in md and "Note: skipped." in md
    assert "img/longmemeval_recall_at_k.png" in md


def test_stage_clock_adds_up_each_stage():
    clock = StageClock()
    with clock("embed"):
        time.sleep(0.05)
    with clock("embed"):
        pass
    clock.add("commit", 0.25)
    assert 0.05 <= clock.seconds["embed"] < 0.2 and clock.seconds["commit"] == 0.25
    assert clock.calls == {"embed": 2, "commit": 1}
