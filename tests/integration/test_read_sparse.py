"""The sparse rail's plan (memvault.sparse_plan_v1): rare terms alone, common terms in pairs, and a fill pass
with common terms alone only when the first pass finds too few rows."""

from __future__ import annotations

import json

import psycopg

from tests.integration.read_helpers import Mem, put_blocks

MEMS = ([Mem(f"Coffee with oat milk, cup {i}") for i in range(30)]
        + [Mem(f"Garden work on the roses, day {i}") for i in range(30)]
        + [Mem("Coffee in the garden with Ana"), Mem("Booked the ferry to Zanzibar")])
QUERY = "coffee garden zanzibar"
# Small budgets, so that a 62-block vault already has "common" words.
PLAN = {"sparse_single_budget": 2, "sparse_max_freq": 0.9}


async def _sparse(services, vault, **cfg) -> list[int]:
    async with services.db.transaction(vault.id) as conn:
        cur = await conn.execute(
            "SELECT id, sparse_rank FROM memvault.fast_search_v1(NULL, %s, NULL, NULL, %s::jsonb)",
            (QUERY, json.dumps({"dense_n": 0, **cfg})))
        rows = await cur.fetchall()
    return [r["id"] for r in sorted(rows, key=lambda r: r["sparse_rank"])]


async def test_common_terms_pair_up_and_fill_only_when_short(services, vault, db_url: str) -> None:
    ids = await put_blocks(services, vault, MEMS)
    both, rare = ids[-2], ids[-1]
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("ANALYZE memvault.block")
        terms, first, fill = conn.execute(
            "SELECT terms::text[], first_pass::text, fill_pass::text "
            "FROM memvault.sparse_plan_v1(%s, 8, %s, 4000, %s)",
            (QUERY, PLAN["sparse_single_budget"], PLAN["sparse_max_freq"])).fetchone()
    assert terms[0] == "'zanzibar'"  # rarest first
    assert first == "'zanzibar' | 'coffe' & 'garden'" or first == "'zanzibar' | 'garden' & 'coffe'", first
    assert fill.startswith(first) and "| 'coffe'" in fill and "| 'garden'" in fill

    # Two rows need no fill: the rare word's row, then the row with both common words.
    assert await _sparse(services, vault, sparse_n=2, **PLAN) == [rare, both]
    # The same top 2 as matching every term alone (a budget that makes every term a single).
    assert await _sparse(services, vault, sparse_n=2, sparse_single_budget=1e9, sparse_max_freq=0.9) == [rare, both]
    # Five rows: the first pass has two, so common words alone fill the rest, ranked after them.
    five = await _sparse(services, vault, sparse_n=5, **PLAN)
    assert five[:2] == [rare, both] and len(five) == 5 and set(five[2:]) <= set(ids[:60])


async def test_a_query_of_stop_words_has_no_sparse_plan(db_url: str) -> None:
    with psycopg.connect(db_url, autocommit=True) as conn:
        assert conn.execute("SELECT * FROM memvault.sparse_plan_v1('how are you')").fetchall() == []


async def _stats(services, vault, words: list[str]) -> dict[str, tuple[float, float]]:
    rows = await services.db.fetchall("SELECT * FROM memvault.lexeme_stats_v1(%s)", (words,), vault_id=vault.id)
    return {r["lexeme"]: (r["freq"], r["est_rows"]) for r in rows}


async def test_lexeme_stats_are_counted_per_vault(services, vault) -> None:
    from app.read.lexeme_stats import refresh_due
    from app.vaults import create_vault

    other = await create_vault(services.db, "other-vault")
    await put_blocks(services, vault, [f"Coffee with oat milk, cup {i}" for i in range(20)] + ["A ferry to Zanzibar"])
    await put_blocks(services, other, [f"The ferry schedule, day {i}" for i in range(20)] + ["Coffee at noon"])

    due = await refresh_due(services, min_blocks=20)
    assert set(due) == {str(vault.id), str(other.id)}
    assert await refresh_due(services, min_blocks=20) == {}  # counted: nothing is due until the vaults grow

    # 'ferry' is in 20 of the other vault's 21 blocks, and in one of this vault's 21.
    mine = await _stats(services, vault, ["ferri", "coffe", "unseen"])
    theirs = await _stats(services, other, ["ferri"])
    assert mine["ferri"] == (1 / 21, 1) and mine["coffe"] == (20 / 21, 20)
    assert mine["unseen"] == (0.5 / 21, 0.5)  # a word first seen after the count: rarer than any counted
    assert theirs["ferri"] == (20 / 21, 20)
    # So this vault's plan takes 'ferry' as its rare term, and the other vault's would not.
    plan = await services.db.fetchone("SELECT terms::text[] AS t FROM memvault.sparse_plan_v1('coffee ferry')",
                                      vault_id=vault.id)
    assert plan["t"][0] == "'ferri'"

    await put_blocks(services, vault, ["Tea", "More tea", "Green tea"])  # 21 -> 24 blocks: more than 10%
    assert set(await refresh_due(services, min_blocks=20)) == {str(vault.id)}
