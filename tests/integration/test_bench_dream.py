"""``memvault bench dream``: each conversation asked before and after one dream, with ``--folds`` (before / after
@10 per conversation and category) and ``--tune`` (every candidate read setting asked in both passes on the same
vault, chosen on the other folds by @10 after the dream)."""

from __future__ import annotations

import argparse

import pytest

from app.importers.datasets import load_locomo
from app.bench.dream import add_parser, format_folds, handler, locomo_dream_folds, run_locomo_dream
from app.bench.folds import read_settings
from tests.integration.test_bench_retrieval import _lme_file, _locomo_file


async def test_locomo_dream_before_and_after_per_setting_and_fold(services, tmp_path) -> None:
    conversations = load_locomo(_locomo_file(tmp_path))
    grid = read_settings("provenance.enabled=false,true")
    result = await run_locomo_dream(services, conversations, grid=grid)
    assert result["dreams"] == 1 and result["questions"] == 2
    assert result["settings"] == ["provenance.enabled=false", "provenance.enabled=true"]
    for sides in result["by_setting"].values():
        assert len(sides["before"]) == len(sides["after"]) == 2
        assert all(d["conversation"] == "syn-1" for d in sides["before"] + sides["after"])
    folds = locomo_dream_folds(result, conversations)
    rows = folds["folds"]["provenance.enabled=false"]
    assert [r["fold"] for r in rows["before"]] == ["syn-1"] and set(rows["after"][0]["by_category"]) == {"1", "4"}
    held = folds["cv"]["held_out"]
    assert len(held) == 1 and held[0]["chosen"] in grid and 0.0 <= held[0]["after"] <= 1.0
    table = format_folds({**result, **folds})
    assert "syn-1" in table and "->" in table and "chosen on the other folds" in table
    # without a grid: one setting, no cross-validation
    plain = await run_locomo_dream(services, conversations)
    assert plain["settings"] == ["default"] and "cv" not in locomo_dream_folds(plain, conversations)
    # the benchmark's vaults are dropped afterwards
    assert await services.db.fetchall("SELECT name FROM memvault.vault WHERE name LIKE 'bench-%%'") == []


def test_folds_and_tune_are_refused_for_longmemeval_and_bad_levers(tmp_path) -> None:
    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers())
    lme = _lme_file(tmp_path)
    for extra in (["--folds"], ["--tune", "provenance.enabled=false,true"]):
        args = parser.parse_args(["dream", str(lme), *extra])
        with pytest.raises(SystemExit, match="for LoCoMo files"):
            handler(args)
    args = parser.parse_args(["dream", str(_locomo_file(tmp_path)), "--tune", "provenance.nope=1"])
    with pytest.raises(SystemExit, match="ReadConfig has no 'provenance.nope'"):
        handler(args)
