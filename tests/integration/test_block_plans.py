"""Lookups of one block by its key, (vault_id, id), read one block row whatever block's statistics say.

When `block` was analyzed while a vault was small or absent (a vault created or grown since: in a service, every
new vault until autovacuum analyzes again; in the benchmark's database, every run's vault), the planner estimates
`vault_id = <that vault>` at one row; every btree index that starts with vault_id then costs what the primary key
costs, and the planner keeps the newest of equal paths. block_session_idx, then block_valid_idx, won with
`Filter: (id = ...)`: each foreign-key check on block read the whole vault. Revision 0031
(sql/incremental/031-block-key-plans.sql) makes block_session_idx partial and rebuilds the primary key last; a new
index on block that starts with vault_id makes these tests fail until the key is rebuilt after it."""

from __future__ import annotations

from datetime import UTC, datetime

import psycopg
from psycopg import sql
import pytest

BLOCKS = 1500

INSERT = """
INSERT INTO memvault.block (vault_id, kind, category, content, normalized, tsv, fingerprint, content_hash,
    session_id, source_kind, trust_score, confidence, valid_at)
SELECT %(vault)s, 'memory', 'Fact', 'block ' || n, 'block ' || n, ''::tsvector, n,
       sha256(convert_to(%(salt)s || n, 'UTF8')), 's' || (n %% 3), 'user', 0.8, 0.8, %(at)s
  FROM generate_series(1, %(n)s) AS n
"""

FK_CHECK = "SELECT 1 FROM ONLY memvault.block x WHERE vault_id = $1 AND id = $2 FOR KEY SHARE OF x"

READ = ("SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) FROM pg_stat_xact_user_tables "
        "WHERE schemaname = 'memvault' AND relname = 'block'")


@pytest.fixture
async def stale(services, vault, db_url):
    """block's statistics taken while only another vault had blocks; then ``vault`` filled with BLOCKS blocks in
    three sessions. Yields a connection (owner, autocommit off) and the vault's block ids."""
    from app.vaults import create_vault

    other = await create_vault(services.db, "statistics-vault")
    at = datetime(2026, 1, 1, tzinfo=UTC)
    with psycopg.connect(db_url) as conn:
        conn.execute(INSERT, {"vault": other.id, "salt": "other ", "at": at, "n": BLOCKS})
        conn.commit()
        conn.execute("ANALYZE memvault.block")
        conn.commit()
        conn.execute(INSERT, {"vault": vault.id, "salt": "vault ", "at": at, "n": BLOCKS})
        conn.commit()
        ids = [r[0] for r in conn.execute("SELECT id FROM memvault.block WHERE vault_id = %s ORDER BY id",
                                          (vault.id,))]
        yield conn, ids


def test_the_foreign_key_checks_query_reads_one_block_row(stale, vault) -> None:
    conn, ids = stale
    conn.execute(f"PREPARE fk(uuid, bigint) AS {FK_CHECK}")
    run = "EXECUTE fk({}, {})"
    plan = conn.execute(sql.SQL("EXPLAIN (FORMAT JSON) " + run).format(str(vault.id), ids[700])).fetchone()[0]
    before = conn.execute(READ).fetchone()[0]
    for n in range(8):  # past the plan cache's five custom plans
        assert conn.execute(sql.SQL(run).format(str(vault.id), ids[700 + n])).fetchall() == [(1,)]
    read = conn.execute(READ).fetchone()[0] - before
    conn.rollback()
    assert read == 8, f"{read} block rows read by 8 key lookups in a vault of {BLOCKS}: {plan}"


def test_a_child_rows_foreign_key_check_reads_one_block_row(stale, vault) -> None:
    """The check PostgreSQL runs itself on an insert into block_source (and every table referencing block)."""
    conn, ids = stale
    conn.execute("SELECT set_config('memvault.vault_id', %s, true)", (str(vault.id),))
    before = conn.execute(READ).fetchone()[0]
    with conn.cursor() as cur:
        cur.executemany("INSERT INTO memvault.block_source (vault_id, block_id, source_kind, said_at, decision) "
                        "VALUES (%s, %s, 'user', now(), 'SKIP')", [(vault.id, i) for i in ids[100:110]])
    read = conn.execute(READ).fetchone()[0] - before
    conn.rollback()
    assert read == 10, f"{read} block rows read by 10 foreign-key checks in a vault of {BLOCKS}"


@pytest.mark.parametrize("where", [
    "b.session_id = 's1'",
    "b.session_id = ANY (ARRAY['s1', 's2'])",
    "b.session_id = (SELECT s FROM (VALUES ('s1')) AS v(s))",
])
def test_selections_by_session_still_use_the_partial_index(stale, vault, where: str) -> None:
    """Every form in which sql/ selects blocks by session implies `session_id IS NOT NULL`, so the partial index
    serves it (statistics current: with stale ones every index that starts with vault_id ties, see above)."""
    conn, _ = stale
    conn.execute("ANALYZE memvault.block")
    conn.execute("SET LOCAL enable_seqscan = off")
    conn.execute("SET LOCAL enable_bitmapscan = off")
    plan = "\n".join(r[0] for r in conn.execute(
        f"EXPLAIN SELECT b.id FROM memvault.block b WHERE b.vault_id = %s AND {where}", (vault.id,)))
    conn.rollback()
    assert "block_session_idx" in plan, plan
