"""Benchmark metrics on hand-computed cases."""

from __future__ import annotations

import math

import pytest

from app.bench.metrics import (EvidenceTurn, Memory, count_tokens, covers, evidence_coverage, mean, ndcg,
                               percentile, rank_sessions, recall_all, recall_any, tokens_at)


def test_rank_sessions_first_appearance_skips_none_and_repeats():
    assert rank_sessions([("s2",), (None,), ("s1", "s2"), ("s3",), ("s1",)]) == ["s2", "s1", "s3"]
    assert rank_sessions([]) == []


@pytest.mark.parametrize(("ranked", "gold", "k", "any_", "all_"), [
    (["a", "b", "c"], {"b"}, 1, 0.0, 0.0),
    (["a", "b", "c"], {"b"}, 2, 1.0, 1.0),
    (["a", "b", "c"], {"b", "z"}, 3, 1.0, 0.0),
    (["a", "b", "c"], {"a", "c"}, 2, 1.0, 0.0),
    (["a", "b", "c"], {"a", "c"}, 3, 1.0, 1.0),
    ([], {"a"}, 5, 0.0, 0.0),
    (["a"], set(), 5, 0.0, 0.0),
])
def test_recall_any_all(ranked, gold, k, any_, all_):
    assert recall_any(ranked, gold, k) == any_
    assert recall_all(ranked, gold, k) == all_


def test_ndcg_hand_computed():
    # relevant at ranks 2 and 4 of 2 relevant: (1/log2(3) + 1/log2(5)) / (1 + 1/log2(3))
    expected = (1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3))
    assert ndcg(["x", "a", "y", "b"], {"a", "b"}, 10) == pytest.approx(expected)
    assert ndcg(["a", "b", "x"], {"a", "b"}, 10) == pytest.approx(1.0)
    assert ndcg(["x", "y"], {"a"}, 10) == 0.0
    # cut at k: the relevant item at rank 3 does not count at k = 2
    assert ndcg(["x", "y", "a"], {"a"}, 2) == 0.0
    # one relevant at rank 3: 1/log2(4) = 0.5
    assert ndcg(["x", "y", "a"], {"a"}, 10) == pytest.approx(0.5)
    assert ndcg(["a"], set(), 10) == 0.0


def test_covers_by_provenance_or_text():
    turn = EvidenceTurn(7, "Caroline: I went to the LGBTQ support group yesterday.")
    assert covers(Memory("something else", frozenset({7})), turn)
    assert covers(Memory("Earlier:\ncaroline:  I went to the LGBTQ support   group yesterday. Then..."), turn)
    assert not covers(Memory("I went to the support group", frozenset({8})), turn)
    assert not covers(Memory("anything"), EvidenceTurn(None, "  "))


def test_evidence_coverage_fraction_at_k():
    ev = [EvidenceTurn(1, "one"), EvidenceTurn(2, "two"), EvidenceTurn(3, "three")]
    mems = [Memory("x", frozenset({2})), Memory("y"), Memory("z", frozenset({1, 3}))]
    assert evidence_coverage(mems, ev, 1) == pytest.approx(1 / 3)
    assert evidence_coverage(mems, ev, 2) == pytest.approx(1 / 3)
    assert evidence_coverage(mems, ev, 3) == pytest.approx(1.0)
    assert evidence_coverage(mems, [], 3) == 0.0
    # by text alone: only a memory whose text holds the whole turn counts
    worded = [Memory("I said one thing", frozenset({1})), Memory("a unit", frozenset({2})), Memory("three")]
    assert evidence_coverage(worded, ev, 3) == pytest.approx(1.0)
    assert evidence_coverage(worded, ev, 3, provenance=False) == pytest.approx(2 / 3)


def test_tokens_cl100k():
    assert count_tokens(["hello world"]) == 2
    assert count_tokens([]) == 0
    mems = [Memory("hello world"), Memory("hello"), Memory("world")]
    assert tokens_at(mems, 2) == 3
    assert tokens_at(mems, 10) == 4


def test_percentiles_linear_interpolation():
    xs = [10.0, 20.0, 30.0, 40.0]
    assert percentile(xs, 50) == pytest.approx(25.0)
    assert percentile(xs, 95) == pytest.approx(38.5)
    assert percentile([5.0], 95) == 5.0
    assert percentile([], 50) == 0.0
    assert percentile(list(range(1, 101)), 95) == pytest.approx(95.05)
    assert mean([1, 2, 3]) == 2.0 and mean([]) == 0.0
