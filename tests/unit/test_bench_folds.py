"""The validation protocol's mechanics (app/bench/folds.py): folds, spreads, and choosing a setting on the other
folds to report it on the held-out one."""

from __future__ import annotations

import pytest

from app.bench.folds import Fold, cross_validate, fold_spread, group_folds, read_settings, seeded_folds


def test_one_fold_per_group_in_order():
    assert group_folds(["c2", "c1", "c2"]) == [Fold("c2", frozenset({"c2"})), Fold("c1", frozenset({"c1"}))]


def test_seeded_folds_cover_every_item_once_stratified_and_reproducible():
    items = [(f"q{i}", f"t{i % 3}") for i in range(30)]
    folds = seeded_folds(items, 3, seed=7)
    assert seeded_folds(items, 3, seed=7) == folds and seeded_folds(items, 3, seed=8) != folds
    members = [q for f in folds for q in f.test]
    assert sorted(members) == sorted(q for q, _ in items)
    for f in folds:  # every type in every fold, about equally; folds of equal size
        counts = [sum(1 for q in f.test if int(q[1:]) % 3 == t) for t in range(3)]
        assert min(counts) >= 3 and len(f.test) == 10
    with pytest.raises(ValueError):
        seeded_folds(items, 1)


def _details(score_of):
    return [{"conv": c, "cat": cat, "m": score_of(c, cat)} for c in ("a", "b", "c") for cat in ("x", "y")]


def test_fold_spread_per_fold_and_per_category():
    details = _details(lambda c, cat: {"a": 1.0, "b": 0.5, "c": 0.0}[c] if cat == "x" else 1.0)
    out = fold_spread(details, group_folds("abc"), lambda d: d["conv"], ["m"], category=lambda d: d["cat"])
    assert [r["m"] for r in out["folds"]] == [1.0, 0.75, 0.5]
    assert out["spread"]["m"] == {"min": 0.5, "mean": 0.75, "max": 1.0}
    assert out["spread_by_category"]["x"]["m"] == {"min": 0.0, "mean": 0.5, "max": 1.0}
    assert out["spread_by_category"]["y"]["m"]["min"] == 1.0


def test_cross_validation_chooses_on_the_other_folds_and_reports_the_held_out_one():
    # setting "tuned" is best only on conversation a (a setting fit to one conversation); "plain" everywhere else
    scores = {"plain": _details(lambda c, cat: 0.6),
              "tuned": _details(lambda c, cat: 1.0 if c == "a" else 0.5)}
    cv = cross_validate(scores, group_folds("abc"), lambda d: d["conv"],
                        lambda ds: sum(d["m"] for d in ds) / len(ds))
    chosen = {f["fold"]: f["chosen"] for f in cv["folds"]}
    # held out, conversation a never sees its own advantage; b and c get the setting a's data chose, and pay
    assert chosen == {"a": "plain", "b": "tuned", "c": "tuned"}
    assert cv["folds"][0]["test"] == 0.6 and cv["folds"][0]["test_best"] == "tuned"
    assert [f["test"] for f in cv["folds"]] == [0.6, 0.5, 0.5]
    assert cv["cross_validated"] == pytest.approx(0.5333, abs=1e-4)
    assert cv["in_sample"] == pytest.approx(0.6667, abs=1e-4) and cv["in_sample_setting"] == "tuned"
    # ties go to the first setting given (the current default)
    tie = cross_validate({"d": _details(lambda c, cat: 0.5), "e": _details(lambda c, cat: 0.5)},
                         group_folds("abc"), lambda d: d["conv"], lambda ds: sum(d["m"] for d in ds) / len(ds))
    assert {f["chosen"] for f in tie["folds"]} == {"d"}


def test_read_settings_build_read_configs():
    grid = read_settings("scoring.window_w=0.5,0")
    assert list(grid) == ["scoring.window_w=0.5", "scoring.window_w=0"]
    assert grid["scoring.window_w=0"].scoring_overrides == (("window_w", 0.0),)
    assert read_settings("cohesion.weight=0.2")["cohesion.weight=0.2"].cohesion.weight == 0.2
    assert read_settings("speaker.enabled=off")["speaker.enabled=off"].speaker.enabled is False
    assert read_settings("candidates=50")["candidates=50"].candidates == 50
    for bad in ("scoring.nope=1", "cohesion.nope=1", "nope=1", "scoring.window_w", "speaker.enabled=maybe", ";",
                "cohesion.weight=0.2;nope=1"):
        with pytest.raises(ValueError):
            read_settings(bad)


def test_read_settings_several_levers_give_every_combination():
    grid = read_settings("provenance.per_source=0,2; scoring.window_w=0.5,0;scoring.trust_w=0.3")
    assert list(grid) == ["provenance.per_source=0;scoring.window_w=0.5;scoring.trust_w=0.3",
                          "provenance.per_source=0;scoring.window_w=0;scoring.trust_w=0.3",
                          "provenance.per_source=2;scoring.window_w=0.5;scoring.trust_w=0.3",
                          "provenance.per_source=2;scoring.window_w=0;scoring.trust_w=0.3"]
    cfg = grid["provenance.per_source=2;scoring.window_w=0;scoring.trust_w=0.3"]
    assert cfg.provenance.per_source == 2 and cfg.scoring_overrides == (("window_w", 0.0), ("trust_w", 0.3))
