"""``--pipeline rails``: the product's rails beside BM25 and exact search of a reference encoder, on the same
questions, through the real write track and database (tiny synthetic files of the benchmarks' formats)."""

from __future__ import annotations

import pytest

from app.importers.datasets import load_locomo, load_longmemeval
from app.bench.folds import group_folds
from app.bench.locomo import RAILS_KS, _objective, run_locomo_pipelines
from app.bench.longmemeval import run_longmemeval_pipelines
from app.bench.references import (RAIL_N, BM25Reference, _Blocks, available_encoders, bm25_cv, format_rails,
                                  rail_retrievers)
from tests.integration.read_helpers import put_blocks
from tests.integration.test_bench_retrieval import _lme_file, _locomo_file

NAMES = ["sparse", "sparse-bm25", "bm25", "bm25-focus", "dense", "use", "dense-focus", "fusion", "fusion-bm25",
         "pool+focus", "sparse+prf", "fusion+prf", "full", "full-bm25"]


def test_unknown_encoder_is_refused_and_missing_ones_are_skipped() -> None:
    with pytest.raises(ValueError, match="unknown reference encoder 'bert'"):
        available_encoders(["use", "bert"])
    ok, skipped = available_encoders(["use"])
    assert ok == ["use"] and skipped == {}


async def test_bm25_reference_ranks_the_rare_term_and_reads_the_vault_as_of(services, vault) -> None:
    from datetime import UTC, datetime, timedelta

    from tests.integration.read_helpers import Mem

    ids = await put_blocks(services, vault, [*(f"Coffee with oat milk, cup {i}" for i in range(20)),
                                             "Booked the ferry to Zanzibar for June",
                                             Mem("Zanzibar ferries sail daily", days_ago=-10)])  # said later
    bm25 = BM25Reference(_Blocks(services))
    hits = await bm25(vault, "When is the ferry to Zanzibar?", as_of=None, n=10)
    assert hits[0] == ids[20] and ids[21] not in hits  # not valid yet now
    later = await bm25(vault, "When is the ferry to Zanzibar?", as_of=datetime.now(UTC) + timedelta(days=20), n=10)
    assert set(later[:2]) == {ids[20], ids[21]}
    assert await bm25(vault, "the and of", as_of=None, n=10) == []  # stop words only: no terms
    assert len(await bm25(vault, "coffee", as_of=None, n=500)) == min(RAIL_N, 20)


async def test_locomo_rails_side_by_side(services, tmp_path) -> None:
    conversations = load_locomo(_locomo_file(tmp_path))
    results = await run_locomo_pipelines(services, conversations, retrievers=rail_retrievers(services, ["use"]),
                                         show_progress=False, depth=100, ks=RAILS_KS)
    assert list(results) == NAMES
    for name, r in results.items():
        assert r["questions"] == 2, name
        assert 0.0 <= r["recall@10"] <= r["recall@25"] <= r["recall@100"] <= r["recall@300"] <= 1.0
    # Six short turns: every evidence turn is in each rail's pool; the fused pool holds the union.
    assert results["fusion"]["recall@300"] == 1.0 and results["full"]["recall@100"] == 1.0
    assert results["pool+focus"]["recall@300"] == 1.0 and results["fusion+prf"]["recall@300"] == 1.0
    table = format_rails(results, ["recall@10", "recall@100"], "category", {"1": "multi-hop", "4": "single-hop"})
    lines = table.splitlines()
    assert lines[0].split() == ["retriever", "n", "recall@10", "recall@100"]
    assert [ln.split()[0] for ln in lines[1:len(NAMES) + 1]] == NAMES
    assert "-- category multi-hop" in table and "-- category single-hop" in table
    cv = bm25_cv(results, group_folds(c.id for c in conversations), lambda d: d["conversation"], _objective)
    assert cv["settings"] == ["search.sparse_bm25=false", "search.sparse_bm25=true"]
    assert cv["folds"][0]["chosen"] in cv["settings"]


async def test_longmemeval_rails_report_the_pool(services, tmp_path) -> None:
    questions = load_longmemeval(_lme_file(tmp_path))
    results = await run_longmemeval_pipelines(services, questions, retrievers=rail_retrievers(services, ["use"]),
                                              show_progress=False)
    assert list(results) == NAMES
    for name, r in results.items():
        assert r["questions"] == 2, name
        assert all(d["recall_all@pool"] in (0.0, 1.0) for d in r["details"]), name
    # Three sessions: the dense rails rank every block, so their pools hold the gold session (the sparse rail of
    # so small a vault may find none: every word is in more than a tenth of its blocks).
    for name in ("dense", "use", "fusion", "full"):
        assert all(d["recall_all@pool"] == 1.0 for d in results[name]["details"]), name
