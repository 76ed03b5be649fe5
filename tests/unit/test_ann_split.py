"""`bench latency`'s ANN check: the fixed split of the dev questions into the half an ef choice may look at (even
-numbered) and the half reported (odd-numbered), each thinned evenly, never to its first ones."""

from __future__ import annotations

import pytest

from app.bench.latency import ann_rows
from app.bench.spread import ANN_QUESTIONS_PER_HALF, split_questions


def test_even_numbered_questions_choose_and_odd_numbered_are_reported() -> None:
    choosing, reported = split_questions(7)
    assert choosing == [0, 2, 4, 6] and reported == [1, 3, 5]


def test_a_half_past_the_cap_is_thinned_evenly_across_all_of_it() -> None:
    choosing, reported = split_questions(556)  # the dev files' questions
    assert len(choosing) == len(reported) == ANN_QUESTIONS_PER_HALF
    assert all(i % 2 == 0 for i in choosing) and all(i % 2 == 1 for i in reported)
    assert not set(choosing) & set(reported)
    assert reported[0] == 1 and reported[-1] >= 550  # from the whole half, not its first 140
    gaps = {b - a for a, b in zip(reported, reported[1:])}
    assert gaps <= {2, 4}  # 278 odd questions for 140 places: every other one or so, no run left out
    assert len(set(reported)) == ANN_QUESTIONS_PER_HALF


def test_the_split_is_fixed_and_the_cap_is_the_callers() -> None:
    assert split_questions(556) == split_questions(556)
    assert split_questions(100, per_half=10)[1] == [1, 11, 21, 31, 41, 51, 61, 71, 81, 91]
    assert split_questions(1) == ([0], [])
    with pytest.raises(ValueError):
        split_questions(10, per_half=0)


def test_the_table_says_which_half_is_reported() -> None:
    ann = {"questions": {"of": 556, "choosing": 140, "reported": 140},
           "ef_search_40": {"recall_at_k": 0.8, "choosing_recall_at_k": 0.81},
           "ef_search_148": {"recall_at_k": 0.972, "choosing_recall_at_k": 0.977}}
    (rep_k, rep_v), (cho_k, cho_v) = ann_rows(ann)
    assert "REPORTED" in rep_k and "odd-numbered" in rep_k and "140 of 556" in rep_k
    assert rep_v == "40: 0.8 148: 0.972"
    assert "choosing" in cho_k and "even-numbered" in cho_k and cho_v == "40: 0.81 148: 0.977"
    assert ann_rows({"questions": {"of": 3, "choosing": 2, "reported": 1}, "note": "no index"}) == [
        ("ANN recall@10 vs exact", "no index")]
