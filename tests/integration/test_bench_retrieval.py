"""The LongMemEval and LoCoMo benchmarks end to end on tiny synthetic files in the same formats, through the
real write track, read track and database (the test clone of the migrated template)."""

from __future__ import annotations

import json

import pytest

from app.importers.datasets import load_locomo, load_longmemeval
from app.bench.locomo import KEYS as LOCOMO_KEYS
from app.bench.locomo import run_locomo
from app.bench.longmemeval import KEYS as LME_KEYS
from app.bench.longmemeval import run_longmemeval, run_longmemeval_shared
from app.vaults import get_vault

SESSIONS = {
    "s-dog": [("user", "I adopted a golden retriever puppy last week and named him Biscuit."),
              ("assistant", "Congratulations on adopting Biscuit! Golden retrievers are friendly dogs.")],
    "s-kyoto": [("user", "My trip to Kyoto in April was wonderful, the cherry blossoms at the temples "
                          "were amazing."),
                ("assistant", "Kyoto in spring is beautiful. Did you visit the Fushimi Inari shrine?")],
    "s-guitar": [("user", "I started taking classical guitar lessons on Tuesdays with a teacher "
                           "named Marta."),
                 ("assistant", "Classical guitar is rewarding; practice scales every day.")],
}
DATES = ["2023/03/01 (Wed) 10:00", "2023/04/20 (Thu) 18:30", "2023/05/02 (Tue) 09:15"]


def _lme_file(tmp_path):
    def question(qid, text, gold):
        ids = list(SESSIONS)
        return {"question_id": qid, "question_type": "single-session-user", "question": text,
                "question_date": "2023/06/01 (Thu) 12:00", "answer": "-", "answer_session_ids": [gold],
                "haystack_dates": DATES, "haystack_session_ids": ids,
                "haystack_sessions": [[{"role": r, "content": c, "has_answer": sid == gold and r == "user"}
                                       for r, c in SESSIONS[sid]] for sid in ids]}
    rows = [question("q-dog", "What did I name my new puppy?", "s-dog"),
            question("q-kyoto", "Which city did I visit to see cherry blossoms?", "s-kyoto")]
    path = tmp_path / "lme.json"
    path.write_text(json.dumps(rows))
    return path


def _locomo_file(tmp_path):
    speakers = ["Ann", "Bo"]
    conv = {"speaker_a": "Ann", "speaker_b": "Bo"}
    dates = ["1:56 pm on 8 May, 2023", "10:00 am on 15 May, 2023", "7:30 pm on 2 June, 2023"]
    for n, (sid, turns) in enumerate(SESSIONS.items(), start=1):
        conv[f"session_{n}_date_time"] = dates[n - 1]
        conv[f"session_{n}"] = [{"speaker": speakers[i % 2], "dia_id": f"D{n}:{i + 1}", "text": text}
                                for i, (_, text) in enumerate(turns)]
    qa = [{"question": "What is the name of Ann's puppy?", "answer": "Biscuit", "evidence": ["D1:1"],
           "category": 4},
          {"question": "Who teaches Ann classical guitar, and which city had cherry blossoms?",
           "answer": "Marta, Kyoto", "evidence": ["D3:1", "D2:1"], "category": 1}]
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([{"sample_id": "syn-1", "conversation": conv, "qa": qa}]))
    return path


@pytest.mark.parametrize("pipeline", ["full", "rrf"])
async def test_longmemeval_bench_end_to_end(services, tmp_path, pipeline):
    questions = load_longmemeval(_lme_file(tmp_path))
    result = await run_longmemeval(services, questions, pipeline=pipeline, show_progress=False)
    assert set(LME_KEYS) <= set(result)
    assert result["questions"] == 2
    assert set(result["by_type"]) == {"single-session-user"}
    for key in ("recall_any@5", "recall_any@10", "recall_all@5", "recall_all@10", "ndcg@10"):
        assert 0.0 <= result[key] <= 1.0
    # three sessions only: every session is in the top 5, so the gold one is too
    assert result["recall_all@5"] == 1.0
    assert result["ndcg@10"] > 0.3
    assert result["tokens@10"] > 0 and result["ingest_turns_per_s"] > 0
    assert 0 < result["recall_p50_ms"] <= result["recall_p95_ms"]
    # the benchmark's vaults are dropped afterwards
    assert await services.db.fetchall("SELECT name FROM memvault.vault WHERE name LIKE 'bench-%%'") == []


async def test_longmemeval_shared_vault_writes_each_session_once_and_keeps_the_vault(services, tmp_path):
    """``--shared-vault``: both questions' haystacks (the same three sessions) go into one vault, each session
    written once; the vault stays, and a second run writes nothing and scores the same."""
    questions = load_longmemeval(_lme_file(tmp_path))
    first = await run_longmemeval_shared(services, questions, "lme-shared-test", show_progress=False)
    assert set(LME_KEYS) <= set(first) and first["questions"] == 2
    assert first["recall_any@5"] == 1.0 and first["ingest_turns_per_s"] > 0
    vault = await get_vault(services.db, "lme-shared-test")
    sessions = await services.db.fetchall("SELECT id FROM memvault.session WHERE vault_id = %s ORDER BY id",
                                          (vault.id,), vault_id=vault.id)
    assert [r["id"] for r in sessions] == sorted(SESSIONS)
    again = await run_longmemeval_shared(services, questions, "lme-shared-test", show_progress=False)
    assert again["vault_blocks"] == first["vault_blocks"] > 0
    assert again["ingest_turns_per_s"] == 0.0  # nothing left to write
    assert again["recall_any@5"] == 1.0


@pytest.mark.parametrize("pipeline", ["full", "dense"])
async def test_locomo_bench_end_to_end(services, tmp_path, pipeline):
    conversations = load_locomo(_locomo_file(tmp_path))
    result = await run_locomo(services, conversations, pipeline=pipeline, show_progress=False)
    assert set(LOCOMO_KEYS) <= set(result)
    assert result["questions"] == 2
    assert set(result["by_category"]) == {"1", "4"}
    assert 0.0 <= result["recall@5"] <= result["recall@10"] <= result["recall@25"] <= 1.0
    # six short turns, 25 memories asked: every evidence turn is covered at k = 25
    assert result["recall@25"] == 1.0
    assert result["tokens@10"] > 0 and result["ingest_turns_per_s"] > 0
    assert 0 < result["recall_p50_ms"] <= result["recall_p95_ms"]


async def test_locomo_bench_depth_reports_deeper_cutoffs(services, tmp_path):
    """``--depth 100``: 100 memories asked per question, and coverage at 50 and 100 reported beside 5 / 10 / 25
    (the evidence the pipeline finds at all), in the result, by category and in the printed table."""
    from app.bench.locomo import format_table, ks_for

    assert ks_for(25) == (5, 10, 25) and ks_for(60) == (5, 10, 25, 50) and ks_for(100) == (5, 10, 25, 50, 100)
    conversations = load_locomo(_locomo_file(tmp_path))
    result = await run_locomo(services, conversations, show_progress=False, depth=100)
    assert result["ks"] == [5, 10, 25, 50, 100]
    assert result["recall@25"] <= result["recall@50"] <= result["recall@100"] == 1.0
    assert all("recall@100" in row for row in result["by_category"].values())
    header = format_table(result).splitlines()[1]
    assert header.split()[-2:] == ["recall@50", "recall@100"]


def test_locomo_depth_argument_says_what_is_allowed():
    import argparse

    from app.bench.locomo import _depth

    assert _depth("100") == 100
    for bad in ("10", "500"):
        with pytest.raises(argparse.ArgumentTypeError, match="between 25 and 200"):
            _depth(bad)


async def test_locomo_tune_keeps_the_vaults_and_cross_validates_a_read_setting(services, tmp_path):
    """``--tune`` (and ``--keep``): each conversation's vault is kept and reused, every candidate setting is
    measured on it, and cross-validation picks per fold on the other folds (one fold per conversation)."""
    from app.bench.folds import cross_validate, read_settings
    from app.bench.locomo import _objective, locomo_fold_spread, locomo_folds

    conversations = load_locomo(_locomo_file(tmp_path))
    grid = read_settings("scoring.window_w=0.5,0")
    result = await run_locomo(services, conversations, show_progress=False, grid=grid)
    assert set(result["by_setting"]) == set(grid) and result["questions"] == 2
    kept = await services.db.fetchall("SELECT name FROM memvault.vault WHERE name LIKE 'bench-locomo-%%'")
    assert [r["name"] for r in kept] == ["bench-locomo-syn-1"]
    again = await run_locomo(services, conversations, show_progress=False, keep=True)
    assert again["ingest_turns_per_s"] == 0.0  # nothing written: the kept vault is read again
    assert again["recall@25"] == result["recall@25"] == 1.0
    folds = locomo_folds(conversations)
    spread = locomo_fold_spread(result["details"], folds)
    assert [r["fold"] for r in spread["folds"]] == ["syn-1"] and spread["spread"]["recall@10"]["min"] >= 0
    cv = cross_validate(result["by_setting"], folds, lambda d: d["conversation"], _objective)
    assert cv["folds"][0]["chosen"] in grid and 0.0 <= cv["cross_validated"] <= 1.0


async def test_longmemeval_folds_split_the_questions(services, tmp_path):
    from app.bench.longmemeval import lme_fold_spread, longmemeval_folds

    questions = load_longmemeval(_lme_file(tmp_path))
    result = await run_longmemeval(services, questions, show_progress=False)
    folds = longmemeval_folds(questions, 2, seed=1)
    assert sorted(len(f.test) for f in folds) == [1, 1]
    spread = lme_fold_spread(result["details"], folds)
    assert len(spread["folds"]) == 2 and set(spread["spread_by_category"]) == {"single-session-user"}
    assert spread["spread"]["recall_all@5"]["min"] == 1.0


async def test_a_kept_locomo_vault_gets_the_second_rail_filled_before_its_questions(services, tmp_path):
    """A vault kept before the second rail was configured is reused with it: every block has its rail row before
    the first question is asked (what the worker's embed_rail2 job would have done)."""
    from app.models.embedders.hashing import HashEmbedder

    conversations = load_locomo(_locomo_file(tmp_path))
    await run_locomo(services, conversations, show_progress=False, keep=True)  # no second rail yet
    rows = await services.db.fetchone("SELECT count(*) AS n FROM memvault.block_rail2")
    assert rows["n"] == 0
    services.rail2 = HashEmbedder(dim=16)
    again = await run_locomo(services, conversations, show_progress=False, keep=True)
    assert again["ingest_turns_per_s"] == 0.0  # the kept vault, not a new ingest
    vault = await get_vault(services.db, "bench-locomo-syn-1")
    counts = await services.db.fetchone(
        "SELECT (SELECT count(*) FROM memvault.block WHERE vault_id = %(v)s) AS blocks, "
        "(SELECT count(*) FROM memvault.block_rail2 WHERE vault_id = %(v)s) AS rail", {"v": vault.id},
        vault_id=vault.id)
    assert counts["blocks"] > 0 and counts["rail"] == counts["blocks"]
