"""The cross-validation splitter of ``memvault bench guard --cv``: data sets, never split across folds."""

from __future__ import annotations

import random

import pytest

from app.safety.grouping import assign_folds, groups_on_both_sides, source_group
from app.safety.training import Doc, cv_folds


@pytest.mark.parametrize(
    ("source", "group"),
    [
        ("acme/bench:data/zh/Goal_Hijacking.csv", "acme/bench:goal_hijacking"),
        ("acme/bench:data/en/Goal_Hijacking_n.csv", "acme/bench:goal_hijacking"),
        ("acme/suite:datasets/prompt_injection/prompt_injection_multilingual_machine_translated.json",
         "acme/suite:prompt_injection"),
        ("acme/bipia:benchmark/text_attack_train.json", "acme/bipia:text_attack"),
        ("acme/bipia:benchmark/email/test.jsonl", "acme/bipia:email"),
        ("acme/probes:data/dan/Dan_9_0.json", "acme/probes:dan"),
        # a constructed text joins the data set of its payload, whatever its frame or carrier
        ("constructed:hidden-comment wrapper + payload acme/games:eval/gandalf.yaml + carrier other/x:y.csv",
         "acme/games:gandalf"),
        ("lindsey98/agentdojo:src/attacks/a.py + src/suites/banking/tasks.py", "lindsey98/agentdojo"),
    ],
)
def test_source_groups_merge_languages_splits_and_payloads(source: str, group: str) -> None:
    assert source_group(source) == group


def test_no_group_is_on_both_sides_of_any_fold() -> None:
    rng = random.Random(7)
    groups = [f"g{rng.randrange(40)}" for _ in range(2000)]
    kinds = [rng.choice(["attack", "benign", "chat"]) for _ in groups]
    folds = assign_folds(groups, kinds, 5)
    assert set(folds) == set(range(5))
    for f in range(5):
        assert groups_on_both_sides(groups, folds, f) == set()
    assert folds == assign_folds(groups, kinds, 5)  # deterministic


def test_a_source_with_attacks_and_benign_texts_keeps_one_fold() -> None:
    groups = ["shared", "shared", "a", "b", "c", "shared", "d"]
    kinds = ["attack", "benign", "attack", "attack", "benign", "chat", "chat"]
    folds = assign_folds(groups, kinds, 3)
    assert len({f for g, f in zip(groups, folds) if g == "shared"}) == 1


def test_authored_negatives_are_always_in_training() -> None:
    docs = [Doc("x", 1, "attack", "direct_instruction", "en", "s1"), Doc("y", 0, "benign", "benign", "en", "s2"),
            Doc("z", 0, "authored", "authored", "en", "authored"), Doc("w", 1, "attack", "exfiltration", "en", "s3")]
    folds = cv_folds(docs, 2)
    assert folds[2] == -1 and all(f in (0, 1) for i, f in enumerate(folds) if i != 2)


def test_cross_validation_needs_two_folds() -> None:
    with pytest.raises(ValueError):
        assign_folds(["a"], ["attack"], 1)
