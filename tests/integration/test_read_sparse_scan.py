"""The sparse rail of a small vault among many (memvault._sparse_rail_scan_v1, memvault.sparse_scan_v1): its rows
read through block_terms' primary key instead of the GIN index every vault shares, with the very matches, scores
and order of the GIN scan; chosen when the vault is small and a small share of the table."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import psycopg

from app.vaults import create_vault
from tests.integration.read_helpers import Mem, put_blocks

MEMS = ([Mem(f"Coffee with oat milk, cup {i}", days_ago=i % 7) for i in range(25)]
        + [Mem(f"Garden work on the roses, day {i}") for i in range(25)]
        + [Mem("Coffee in the garden with Ana"), Mem("Booked the ferry to Zanzibar"),
           Mem("Zanzibar coffee beans from the market", days_ago=3),
           Mem("Noise: coffee coffee coffee", tags=("noise",))])
QUERIES = ["coffee garden zanzibar", "oat milk cup", "roses day garden", "ferry to Zanzibar with Ana",
           "nothing matches this"]
PLAN = {"sparse_single_budget": 2, "sparse_max_freq": 0.9}  # common words pair up in a small vault


def _rail(db_url: str, vault, query: str, **cfg) -> tuple[list[tuple[int, int]], str | None]:
    """(id, sparse rank) of the sparse rail, and which scan ran ("rows", "gin" or None), counted by the
    transaction's function statistics (track_functions, so a superuser's connection)."""
    with psycopg.connect(db_url) as conn:
        conn.execute("SET LOCAL track_functions = 'pl'")
        conn.execute("SELECT set_config('memvault.vault_id', %s, true)", (str(vault.id),))
        rows = conn.execute(
            "SELECT id, sparse_rank FROM memvault.fast_search_v1(NULL, %s, NULL, NULL, %s::jsonb) "
            "WHERE sparse_rank IS NOT NULL ORDER BY sparse_rank",
            (query, json.dumps({"dense_n": 0, **cfg}))).fetchall()
        ran = conn.execute(
            "SELECT coalesce(pg_stat_get_xact_function_calls('memvault._sparse_rail_scan_v1'::regproc), 0), "
            "coalesce(pg_stat_get_xact_function_calls('memvault._sparse_rail_v1'::regproc), 0)").fetchone()
    assert not (ran[0] and ran[1])
    return [tuple(r) for r in rows], "rows" if ran[0] else "gin" if ran[1] else None


async def test_the_row_scan_finds_what_the_gin_scan_finds(services, vault, db_url: str) -> None:
    await put_blocks(services, vault, MEMS)
    past = (datetime.now(UTC) - timedelta(days=4)).isoformat()
    for query in QUERIES:
        for cfg in ({}, PLAN, {"sparse_n": 3, **PLAN}, {"sparse_n": 40}):
            gin, by_gin = _rail(db_url, vault, query, sparse_scan=False, **cfg)
            rows, by_rows = _rail(db_url, vault, query, sparse_scan=True, **cfg)
            assert rows == gin, (query, cfg)
            if query != "nothing matches this":
                assert (by_gin, by_rows) == ("gin", "rows") and len(rows) >= min(3, cfg.get("sparse_n", 3))
    # As of a past time (fewer memories valid), and with the noise list empty (the tagged one comes back).
    async with services.db.transaction(vault.id) as conn:
        for scan in (False, True):
            cur = await conn.execute(
                "SELECT array_agg(id ORDER BY sparse_rank) AS ids FROM memvault.fast_search_v1(NULL, %s, %s, NULL, "
                "%s::jsonb) WHERE sparse_rank IS NOT NULL",
                ("coffee zanzibar", past, json.dumps({"dense_n": 0, "noise_tags": [], "sparse_scan": scan})))
            got = (await cur.fetchone())["ids"]
            if not scan:
                want = got
    assert got == want and len(got) >= 3


async def test_a_small_vault_among_many_reads_its_rows(services, vault, db_url: str) -> None:
    small = await put_blocks(services, vault, MEMS[:6] + MEMS[-4:-1])
    big = await create_vault(services.db, "scan-big")
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("INSERT INTO memvault.block (vault_id, content, normalized, tsv, fingerprint, content_hash, "
                     "source_kind, trust_score, confidence, valid_at) "
                     "SELECT %s, 'coffee ' || g, 'coffee ' || g, to_tsvector('english', 'coffee garden ' || g), g, "
                     "decode(md5(g::text), 'hex'), 'import', 0.5, 0.5, now() FROM generate_series(1, 2000) g",
                     (big.id,))
        conn.execute("ANALYZE memvault.block_terms")
        # 9 blocks of ~2,009: a small share of the table; 2,000 are not (nor is any vault over 5,000).
        assert conn.execute("SELECT memvault.sparse_scan_v1(9)").fetchone()[0] is True
        assert conn.execute("SELECT memvault.sparse_scan_v1(2000)").fetchone()[0] is False
        assert conn.execute("SELECT memvault.sparse_scan_v1(9, 5)").fetchone()[0] is False
    rows, ran = _rail(db_url, vault, "coffee garden zanzibar")  # the rule decides: the small vault's rows
    assert ran == "rows" and rows and {i for i, _ in rows} <= set(small)
    assert rows == _rail(db_url, vault, "coffee garden zanzibar", sparse_scan=False)[0]
    assert _rail(db_url, big, "coffee garden")[1] == "gin"  # the large one: the GIN index
