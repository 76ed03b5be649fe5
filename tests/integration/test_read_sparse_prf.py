"""Pseudo-relevance feedback on the sparse rail (fast_search_v1's sparse_prf_w; SearchConfig.sparse_prf_w): the rare
lexemes the rail's best blocks share join the query in a second pass, fused as a rail of its own; off (weight 0)
nothing changes."""

from __future__ import annotations

import json

from tests.integration.read_helpers import put_blocks

TEXTS = [
    "Biscuit the puppy swam in Lake Tahoe with the kids",  # the query's term, and tahoe
    "We took Biscuit to Tahoe again, the puppy loved the cold water",  # the query's term, and tahoe
    "The cabin at Tahoe had a view of the whole lake",  # tahoe only: what feedback finds
    "My sister moved to Lisbon last spring",
] + [f"Notes about the weather on day {i}, cloudy and mild" for i in range(40)]


async def _search(services, vault, **cfg) -> list[int]:
    async with services.db.transaction(vault.id) as conn:
        cur = await conn.execute("SELECT id FROM memvault.fast_search_v1(NULL, 'biscuit', NULL, NULL, %s::jsonb)",
                                 (json.dumps({"dense_n": 0, "sparse_n": 5, **cfg}),))
        return [r["id"] for r in await cur.fetchall()]


async def test_feedback_terms_bring_in_what_the_best_matches_share(services, vault) -> None:
    ids = await put_blocks(services, vault, TEXTS)
    await services.db.fetchone("SELECT memvault.refresh_lexeme_stats_v1(%s) AS n", (vault.id,), vault_id=vault.id)
    cabin, lisbon = ids[2], ids[3]
    plain = await _search(services, vault)
    assert set(plain) == {ids[0], ids[1]}  # the query's term is in two blocks only
    assert await _search(services, vault, sparse_prf_w=0) == plain
    on = await _search(services, vault, sparse_prf_w=1)
    assert cabin in on and lisbon not in on and on[:2] == plain  # the query's own matches stay first
    # a lexeme one best block holds alone is no feedback; so is a common one (more than sparse_max_freq)
    assert await _search(services, vault, sparse_prf_w=1, sparse_max_freq=0.01) == plain
    # BM25 scoring takes no feedback (idf-sum scoring only)
    bm25 = await _search(services, vault, sparse_bm25=True)
    assert await _search(services, vault, sparse_bm25=True, sparse_prf_w=1) == bm25
