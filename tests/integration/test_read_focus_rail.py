"""A second dense query (fast_search_v1's qvec_focus at focus_dense_w; SearchConfig.focus_dense_w): the blocks
nearest the question's focus become a rail of their own in the fusion; off (weight 0) nothing changes."""

from __future__ import annotations

import json

from pgvector import Vector

from tests.integration.read_helpers import put_blocks

TEXTS = [f"Notes about the weather on day {i}, cloudy and mild" for i in range(30)] + [
    "I started taking taekwondo lessons on Thursdays", "My sister moved to Lisbon last spring"]


async def _search(services, vault, qvec, **cfg) -> list[int]:
    async with services.db.transaction(vault.id) as conn:
        cur = await conn.execute("SELECT id FROM memvault.fast_search_v1(%s, 'weather', NULL, NULL, %s::jsonb)",
                                 (qvec, json.dumps({"dense_n": 3, "sparse_n": 3, **cfg})))
        return [r["id"] for r in await cur.fetchall()]


async def test_the_focus_query_adds_its_nearest_blocks_as_a_rail(services, vault) -> None:
    ids = await put_blocks(services, vault, TEXTS)
    taekwondo = ids[30]
    qvec = services.embedder.embed_query("What was the weather like?")
    focus = Vector(services.embedder.embed_query("martial arts taekwondo")).to_text()
    plain = await _search(services, vault, qvec)
    assert taekwondo not in plain
    for exact in (True, False):  # a small vault exactly; a large one through its index (exact until it has one)
        off = await _search(services, vault, qvec, qvec_focus=focus, focus_dense_w=0, exact=exact)
        assert off == plain
        on = await _search(services, vault, qvec, qvec_focus=focus, focus_dense_w=1, exact=exact)
        assert taekwondo in on and set(plain) <= set(on)
