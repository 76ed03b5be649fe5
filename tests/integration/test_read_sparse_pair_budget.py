"""The sparse plan's pair budget (memvault.sparse_plan_v3 / _v4, ``sparse_pair_budget``): in a large vault only the
rarest "not single" terms, within the budget's estimated rows, pair up in the first pass; a vault of at most
100,000 blocks never reaches the default budget, so its plan is the unbudgeted one (sparse_plan_v1 / _v2) exactly."""

from __future__ import annotations

import re
from itertools import combinations

import psycopg
import pytest

QUERY = "alpha bravo charlie delta echo foxtrot golf hotel"


def _fake_stats(db_url: str, vault_id, blocks: int, ndocs: list[int]) -> list[str]:
    """The vault's lexeme_stats as if it held ``blocks`` blocks, the query's lexemes in ``ndocs`` of them (in the
    query's order); returns the lexemes."""
    with psycopg.connect(db_url, autocommit=True) as conn:
        lexemes = conn.execute("SELECT tsvector_to_array(memvault.sparse_document_v1(%s))", (QUERY,)).fetchone()[0]
        lexemes = sorted(lexemes, key=lambda x: QUERY.index(x[:4]))
        assert len(lexemes) == len(ndocs) == 8, lexemes
        conn.execute("INSERT INTO memvault.lexeme_stats_state (vault_id, blocks, lexemes, postings) "
                     "VALUES (%s, %s, 8, %s)", (vault_id, blocks, blocks * 20))
        for lexeme, n in zip(lexemes, ndocs):
            conn.execute("INSERT INTO memvault.lexeme_stats (vault_id, lexeme, ndoc) VALUES (%s, %s, %s)",
                         (vault_id, lexeme, n))
    return lexemes


def _clauses(first: str) -> tuple[set[str], set[frozenset[str]]]:
    """A first pass's single terms and its pairs, the factored a & (b | c) read as the pairs a & b, a & c."""
    singles, pairs = set(), set()
    for m in re.finditer(r"('[^']+')(?: & (?:\( ([^)]*) \)|('[^']+')))?", first):
        head, group, one = m.groups()
        if group is None and one is None:
            singles.add(head)
        for other in (group.split(" | ") if group else [one] if one else []):
            pairs.add(frozenset((head, other)))
    return singles, pairs


async def _plans(services, vault, sql_new: str, sql_old: str) -> tuple[dict, dict]:
    new = await services.db.fetchone(sql_new, (QUERY,), vault_id=vault.id)
    old = await services.db.fetchone(sql_old, (QUERY,), vault_id=vault.id)
    return new, old


V1 = "SELECT terms::text[] AS terms, idf, first_pass::text AS first, fill_pass::text AS fill FROM memvault.{}(%s)"
V2 = ("SELECT terms::text[] AS terms, lexemes, idf, first_pass::text AS first, fill_pass::text AS fill, avg_len "
      "FROM memvault.{}(%s)")


@pytest.mark.parametrize("new, old", [("sparse_plan_v3", "sparse_plan_v1"), ("sparse_plan_v4", "sparse_plan_v2")])
async def test_a_large_vault_pairs_only_its_rarest_common_terms(services, vault, db_url: str, new, old) -> None:
    # A million blocks: one rare term, then common ones (20k, 30k, 40k, ... rows), all under 10% of the vault.
    lx = _fake_stats(db_url, vault.id, 1_000_000, [3000, 20000, 30000, 40000, 50000, 60000, 70000, 80000])
    sql = V1 if new == "sparse_plan_v3" else V2
    capped, full = await _plans(services, vault, sql.format(new), sql.format(old))
    a, b, c = (f"'{x}'" for x in lx[:3])
    # 20k + 30k rows pair up; the next term would take the pairs past 70k rows.
    assert capped["first"] == f"{a} | {b} & {c}", capped["first"]
    assert _clauses(capped["first"]) == ({a}, {frozenset((b, c))})
    # Without the budget every pair of the seven common terms (factored: t1 & (t2 | ... | t7) | ... | t6 & t7).
    common = [f"'{x}'" for x in lx[1:]]
    assert _clauses(full["first"]) == ({a}, {frozenset(p) for p in combinations(common, 2)}), full["first"]
    # The same terms score every match, and the fill pass is the plan's own (first pass + fill terms).
    assert capped["terms"] == full["terms"] and capped["idf"] == full["idf"]
    assert capped["fill"] is None and full["fill"] is None  # no common term within the 4,000-row budget alone
    # The budget is a parameter (fast search's sparse_pair_budget): infinity is today's plan.
    unbounded = await services.db.fetchone(
        (sql.format(new)).replace("(%s)", "(%s, 8, 1000, 4000, 0.1, 'infinity')"), (QUERY,), vault_id=vault.id)
    assert unbounded == full


@pytest.mark.parametrize("new, old", [("sparse_plan_v3", "sparse_plan_v1"), ("sparse_plan_v4", "sparse_plan_v2")])
async def test_a_vault_of_100k_blocks_keeps_todays_plan(services, vault, db_url: str, new, old) -> None:
    # The most a 100k vault can put in the pairs: seven terms at the 10% frequency cap (plus the rarest).
    _fake_stats(db_url, vault.id, 100_000, [900, 10000, 10000, 10000, 10000, 10000, 10000, 10000])
    sql = V1 if new == "sparse_plan_v3" else V2
    capped, full = await _plans(services, vault, sql.format(new), sql.format(old))
    assert capped == full
    assert len(_clauses(capped["first"])[1]) == 21  # all the pairs of the seven common terms


def test_fast_search_sends_the_pair_budget() -> None:
    from app.read.config import SearchConfig

    assert SearchConfig().params(None)["sparse_pair_budget"] == 70000.0


async def test_the_factored_pairs_match_and_rank_as_the_flat_pairs(services, vault, db_url: str) -> None:
    import random

    from tests.integration.read_helpers import put_blocks

    words = QUERY.split()
    rng = random.Random(7)
    await put_blocks(services, vault, [" ".join(rng.sample(words, rng.randint(1, 4))) + f" note {i}"
                                       for i in range(80)])
    # Counted as a large vault's: one rare term, seven common ones, all of them in the (factored) pairs.
    _fake_stats(db_url, vault.id, 1_000_000, [3000, 5000, 6000, 7000, 8000, 9000, 9500, 9900])
    plan = await services.db.fetchone(V1.format("sparse_plan_v3"), (QUERY,), vault_id=vault.id)
    singles, pairs = _clauses(plan["first"])
    assert len(pairs) == 21 and "(" in plan["first"]
    flat = " | ".join(sorted(singles) + [" & ".join(sorted(p)) for p in sorted(pairs, key=sorted)])
    rail = ("SELECT memvault._sparse_rail_v1(%s, %s::tsquery[], %s::float8[], %s::tsquery, now(), false, "
            "'{}'::text[], %s) AS ids")
    for n in (5, 20, 100):
        factored = await services.db.fetchone(rail, (vault.id, plan["terms"], plan["idf"], plan["first"], n),
                                              vault_id=vault.id)
        flat_ids = await services.db.fetchone(rail, (vault.id, plan["terms"], plan["idf"], flat, n),
                                              vault_id=vault.id)
        assert factored["ids"] == flat_ids["ids"]
        assert len(factored["ids"]) == n or n == 100 and len(factored["ids"]) > 20
