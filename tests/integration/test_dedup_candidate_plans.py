"""The bulk path's candidate rows (memvault.dedup_candidate_rows_v1) cost rows in proportion to the batch's pairs,
whatever block's statistics say.

PostgreSQL 17 plans a SQL function's statement without its arguments, so every unnest of the batch's arrays is
taken for 10 rows. The function joined the (item, block) pairs to the unnested items on the item's number: with
block never analyzed (a new database's table until autovacuum's first ANALYZE of it, which comes at a different
point of every run) that join was a nested loop that scanned all the batch's items again for every pair (500 items
and 3,500 pairs: 1.75M rows, ~0.26 s a batch), and a hash join once block had statistics: the bulk path's PostgreSQL
CPU a memory doubled in the runs whose first ANALYZE came late (docs/benchmarks.md, branch bulk7). The items are now
read by subscript. The rows each plan node handles are counted from auto_explain's plan of the function's statement
(EXPLAIN ANALYZE of a nested statement, sent to this client as a notice), never timed."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime

import numpy as np
from pgvector.psycopg import register_vector
import psycopg
import pytest

from app.db.queries import Q

BLOCKS = 1500
ITEMS = 100
PAIRS = 7  # blocks the mirror names for each item (k + its spare)

COPY = ("COPY memvault.block (vault_id, kind, category, content, normalized, tsv, fingerprint, content_hash, "
        "source_kind, trust_score, confidence, valid_at, embedding) FROM STDIN")


def _fill(conn: psycopg.Connection, vault_id, vectors: np.ndarray, salt: str) -> list[tuple[int, bytes]]:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    with conn.cursor().copy(COPY) as copy:
        for n, v in enumerate(vectors):
            copy.write_row((vault_id, "memory", "Fact", f"{salt} {n}", f"{salt} {n}", "", n,
                            f"{salt} {n}".encode().ljust(32, b"."), "user", 0.8, 0.8, at, v))
    conn.commit()
    return [(r[0], bytes(r[1])) for r in conn.execute(
        "SELECT id, content_hash FROM memvault.block WHERE vault_id = %s ORDER BY id", (vault_id,))]


@pytest.fixture(params=["never analyzed", "analyzed without the vault", "analyzed"])
async def batch(request, services, vault, db_url):
    """A vault of BLOCKS blocks, block's statistics in the state of the parameter, and a batch of ITEMS items as the
    bulk path sends it (PAIRS blocks named for each, a tenth of the items holding a block's hash). Yields the
    owner's connection (autovacuum off for block in this test's database, so its state is the parameter's) and
    the statement's parameters."""
    from app.vaults import create_vault

    rng = np.random.default_rng(7)
    pick = random.Random(7)
    dim = services.embedder.dim
    with psycopg.connect(db_url) as conn:
        register_vector(conn)
        conn.execute("ALTER TABLE memvault.block SET (autovacuum_enabled = false)")
        conn.commit()
        if request.param == "analyzed without the vault":
            other = await create_vault(services.db, "statistics-vault")
            _fill(conn, other.id, rng.standard_normal((BLOCKS, dim), dtype=np.float32), "other")
            conn.execute("ANALYZE memvault.block")
            conn.commit()
        vectors = rng.standard_normal((BLOCKS, dim), dtype=np.float32)
        blocks = _fill(conn, vault.id, vectors, "vault")
        if request.param == "analyzed":
            conn.execute("ANALYZE memvault.block")
            conn.commit()
        elif request.param == "never analyzed":
            assert conn.execute("SELECT reltuples FROM pg_class WHERE oid = 'memvault.block'::regclass"
                                ).fetchone()[0] < 0, "block was analyzed: this case needs a table never analyzed"
        items, ids, embeddings, hashes = [], [], [], []
        for item in range(1, ITEMS + 1):
            near = pick.sample(range(BLOCKS), PAIRS)
            items += [item] * PAIRS
            ids += [blocks[n][0] for n in near]
            embeddings.append(vectors[near[0]] + rng.standard_normal(dim, dtype=np.float32) * 0.05)
            hashes.append(blocks[near[1]][1] if item % 10 == 0 else f"new {item}".encode().ljust(32, b"."))
        layers = ["curated"] * ITEMS
        yield conn, (vault.id, items, ids, embeddings, hashes, layers, 3, 0.2)


def _handled(node: dict) -> int:
    """Rows a plan node and those under it produced, or read and dropped by a filter."""
    own = (node.get("Actual Rows", 0) * node.get("Actual Loops", 1) + node.get("Rows Removed by Join Filter", 0)
           + node.get("Rows Removed by Filter", 0))
    return own + sum(_handled(n) for n in node.get("Plans", []))


def test_the_candidate_rows_handle_rows_in_proportion_to_the_pairs(batch) -> None:
    conn, params = batch
    conn.execute("LOAD 'auto_explain'")
    for setting in ("log_min_duration = 0", "log_nested_statements = on", "log_analyze = on",
                    "log_timing = off", "log_level = notice", "log_format = json"):
        conn.execute(f"SET auto_explain.{setting}")
    plans: list[dict] = []
    conn.add_notice_handler(lambda d: plans.append(json.loads(d.message_primary[d.message_primary.index("{"):]))
                            if "Query Text" in (d.message_primary or "") else None)
    conn.execute("SET ROLE memvault_service")  # as the bulk path runs it: row-level security on
    conn.execute("SELECT set_config('memvault.vault_id', %s, false)", (str(params[0]),))
    rows = conn.execute(Q.dedup_candidate_rows, params).fetchall()
    conn.execute("RESET ROLE")
    body = [p for p in plans if "dedup_candidate_rows_v1(" not in p["Query Text"]
            and "set_config" not in p["Query Text"]]
    assert len(body) == 1, [p["Query Text"][:80] for p in plans]
    handled = _handled(body[0]["Plan"])
    pairs = ITEMS * PAIRS
    assert handled <= 10 * pairs, f"{handled} rows handled for {pairs} pairs: {json.dumps(body[0]['Plan'])[:3000]}"
    # the rows themselves: every item's 3 nearest at cosine >= 0.2 (its first block, at ~0.99, first of them),
    # and each tenth item's block of the same hash
    by_item: dict[int, list] = {}
    for r in rows:
        by_item.setdefault(r[0], []).append(r)
    assert sorted(by_item) == list(range(1, ITEMS + 1))
    first = dict(zip(params[1][::PAIRS], params[2][::PAIRS], strict=True))
    for item, found in by_item.items():
        assert found[0][1] == first[item] and found[0][2] > 0.99 and found[0][-1] is True
        assert sum(1 for r in found if r[-1]) <= 3
        assert any(r[-2] for r in found) == (item % 10 == 0)  # same_hash
