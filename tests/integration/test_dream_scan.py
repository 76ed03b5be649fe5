"""The dream's bounded contradiction scan (dream_conflict_scan_v3): knowledge updates found as 'value' pairs and
superseded with the right valid time, values listed in one session left alone, the work of one dream capped,
and the same pairs found through the vault's own HNSW index as by the exact pass."""

from __future__ import annotations

import json

import pytest

from app.background.dream import DreamLoop
from app.db.ann_index import apply
from app.db.queries import Q
from app.models.tasks.values import VALUE_PATTERN, values
from tests.integration.read_helpers import Mem, put_blocks

UPDATE = [Mem("I go to yoga twice a week to help with my anxiety.", days_ago=120, session_id="s-jan"),
          Mem("I go to yoga three times a week now to help with my anxiety.", days_ago=10, session_id="s-may")]
SAME_SESSION = [Mem(f"Band practice, take {i}.", days_ago=30, session_id="s-band") for i in (1, 2)]
# the later statement keeps one of the earlier one's values and adds none: detail, not a changed value
DETAIL = [Mem("I wake up at 7:30 AM and go to bed at 11:30 PM.", days_ago=50, session_id="s-a"),
          Mem("I need to wake up at 7:30 AM on weekdays.", days_ago=5, session_id="s-b")]
OTHER = [Mem(t, days_ago=d, session_id=f"s-{d}") for t, d in (
    ("My sister works at a bakery in Porto.", 90), ("The cat sleeps on the piano bench.", 60),
    ("I ran 5 miles on Monday.", 40), ("I ran 3 miles on Tuesday.", 20))]


@pytest.fixture(autouse=True)
async def _pool_ready(services) -> None:
    await services.db.pool.resize(min_size=4, max_size=services.db.pool.max_size)
    await services.db.pool.wait()


async def _scan(services, vault, **overrides) -> tuple[dict, list[dict]]:
    """The scan alone, in a transaction rolled back: its report and the pairs it would add."""
    args = {"run": 0, "single_valued": None, "since": None, "kinds": ["memory", "unit"], "min_cos": 0.85,
            "value_min_cos": 0.70, "neighbours": 3, "limit": 200, "max_new": 2000, "exact_below": 5000,
            "value_pattern": VALUE_PATTERN}
    args.update(overrides)
    async with services.db.transaction(vault.id) as conn:
        async with conn.transaction(force_rollback=True):
            cur = await conn.execute(Q.dream_conflict_scan, tuple(args.values()))
            report = (await cur.fetchone())["scan"]
            cur = await conn.execute("SELECT old_block_id, new_block_id, source, detail FROM memvault.dream_conflict "
                                     "WHERE vault_id = %s ORDER BY old_block_id, new_block_id", (vault.id,))
            return report, [dict(r) for r in await cur.fetchall()]


async def test_a_knowledge_update_is_a_value_pair_and_is_superseded(services, vault) -> None:
    old, new = await put_blocks(services, vault, UPDATE)
    band = await put_blocks(services, vault, SAME_SESSION)
    ran = (await put_blocks(services, vault, OTHER))[2:]
    detail = await put_blocks(services, vault, DETAIL)
    report, pairs = await _scan(services, vault)
    by_pair = {(p["old_block_id"], p["new_block_id"]): p for p in pairs}
    assert by_pair[(old, new)]["source"] == "value"
    assert by_pair[(old, new)]["detail"]["old_values"] == ["twice"]
    assert by_pair[(old, new)]["detail"]["new_values"] == ["three"]
    assert by_pair[tuple(band)]["source"] == "semantic"  # one session's list: not an update
    assert by_pair.get(tuple(detail), {}).get("source") != "value"
    assert report["scanned"] == 10 and report["unscanned"] == 0 and report["exact"] is True

    run = (await DreamLoop(services).run(vault, force=True)).run
    assert run["report"]["conflicts"]["found"]["value"] == 2  # the yoga update, and the two runs
    rows = {r["id"]: r for r in await services.db.fetchall(
        "SELECT id, valid_at, invalid_at, superseded_by FROM memvault.block WHERE vault_id = %s AND id = ANY (%s)",
        (vault.id, [old, new, *ran]), vault_id=vault.id)}
    assert rows[old]["superseded_by"] == new and rows[old]["invalid_at"] == rows[new]["valid_at"]
    assert rows[new]["invalid_at"] is None
    # two past runs on different days both happened: the judge keeps both
    assert all(rows[i]["invalid_at"] is None for i in ran)
    conflicts = await services.db.fetchall("SELECT c FROM memvault.dream_conflicts_v1(NULL, 50) c", vault_id=vault.id)
    decided = {(c["c"]["old_block_id"], c["c"]["new_block_id"]): c["c"] for c in conflicts}
    assert decided[(old, new)]["status"] == "applied" and decided[(old, new)]["action"] == "SUPERSEDE"
    assert decided[tuple(ran)]["action"] == "COEXIST"


async def test_the_scan_is_bounded_and_scans_only_what_is_new(services, vault) -> None:
    await put_blocks(services, vault, UPDATE + OTHER)
    report, _ = await _scan(services, vault, max_new=2)
    assert report["scanned"] == 2 and report["unscanned"] == 4
    report, pairs = await _scan(services, vault, limit=0)
    assert pairs == [] and report["found"] == {"slot": 0, "semantic": 0, "value": 0, "duplicate": 0}
    await DreamLoop(services).run(vault, force=True)
    # the next dream scans the facts recorded since: none, so no work and no pair
    again = (await DreamLoop(services).run(vault, force=True)).run
    assert again["stats"]["gather_signal"]["scan"] == {"scanned": 0, "unscanned": 0, "exact": True}


async def test_the_vault_index_finds_the_pairs_the_exact_pass_finds(services, vault) -> None:
    await put_blocks(services, vault, UPDATE + SAME_SESSION + OTHER)
    exact_report, exact_pairs = await _scan(services, vault)
    await apply(services.db, min_blocks=5, vault_id=vault.id)  # the vault's own HNSW index
    report, pairs = await _scan(services, vault, exact_below=0)
    assert exact_report["exact"] is True and report["exact"] is False
    assert json.dumps(pairs, default=str) == json.dumps(exact_pairs, default=str) and pairs


@pytest.mark.parametrize("text", [
    "I go to yoga three times a week, twice on Monday; 2,000 miles since 2024-05-05 at 9:30.",
    "I think I'm close to 1300 now, up from 1250 in March (10-12% a month).",
    "I may go to someone's place often.",  # no value: the modal "may", "one" and "ten" inside words
    "我每週去三次健身房，星期二休息。",
])
async def test_sql_and_python_read_values_alike(services, vault, text: str) -> None:
    """One pattern (app/models/tasks/values.py): the dream's SQL scan and the Python judge find the same values."""
    row = await services.db.fetchone("SELECT memvault.value_tokens_v2(%s, %s) AS v", (text, VALUE_PATTERN),
                                     vault_id=vault.id)
    assert row["v"] == sorted(values(text))
