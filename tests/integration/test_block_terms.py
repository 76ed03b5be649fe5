"""The sparse rail's narrow table memvault.block_terms (sql/incremental/028-block-terms.sql): kept in step with
memvault.block by its triggers (insert, a change of the columns the rail reads, delete by the cascade, a purge),
visible to a vault's transaction only for that vault, and read by _sparse_rail_v1/_v2 with the very matches,
scores and order the same scans over memvault.block gave before."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import psycopg

from app.vaults import create_vault
from tests.integration.read_helpers import Mem, put_blocks

COLS = "vault_id, tsv::text, valid_at, invalid_at, retracted_at, quarantine_tags"


def _mirror(conn: psycopg.Connection, vault_id) -> tuple[list, list]:
    """(block's projection, block_terms' rows) of a vault, both ordered by block id."""
    blocks = conn.execute(f"SELECT id, {COLS} FROM memvault.block WHERE vault_id = %s ORDER BY id",
                          (vault_id,)).fetchall()
    terms = conn.execute(f"SELECT block_id, {COLS} FROM memvault.block_terms WHERE vault_id = %s ORDER BY block_id",
                         (vault_id,)).fetchall()
    return blocks, terms


async def test_triggers_keep_block_terms_in_step(services, vault, db_url: str) -> None:
    ids = await put_blocks(services, vault, [f"Sailing to the island of Corfu, trip {i}" for i in range(6)])
    with psycopg.connect(db_url, autocommit=True) as conn:
        blocks, terms = _mirror(conn, vault.id)
        assert len(terms) == 6 and blocks == terms
        # A bulk insert (one statement, many rows) is mirrored by the statement trigger too.
        conn.execute("INSERT INTO memvault.block (vault_id, content, normalized, tsv, fingerprint, content_hash, "
                     "source_kind, trust_score, confidence, valid_at) "
                     "SELECT %s, 'bulk ' || g, 'bulk ' || g, to_tsvector('simple', 'bulk kayak ' || g), g, "
                     "decode(md5(g::text), 'hex'), 'import', 0.5, 0.5, now() FROM generate_series(1, 3) g",
                     (vault.id,))
        # Supersede / invalidate, retract, quarantine, a new text: each mirrored.
        conn.execute("UPDATE memvault.block SET invalid_at = now(), superseded_by = %s WHERE vault_id = %s AND id = %s",
                     (ids[1], vault.id, ids[0]))
        conn.execute("UPDATE memvault.block SET retracted_at = now() WHERE vault_id = %s AND id = %s",
                     (vault.id, ids[2]))
        conn.execute("UPDATE memvault.block SET quarantine_tags = '{injection}' WHERE vault_id = %s AND id = %s",
                     (vault.id, ids[3]))
        conn.execute("UPDATE memvault.block SET valid_at = valid_at - interval '3 days', "
                     "tsv = to_tsvector('english', 'Rowing to Paxos') WHERE vault_id = %s AND id = %s",
                     (vault.id, ids[4]))
        blocks, terms = _mirror(conn, vault.id)
        assert len(terms) == 9 and blocks == terms
        by_id = {t[0]: t for t in terms}
        assert by_id[ids[0]][4] is not None and by_id[ids[2]][5] is not None
        assert by_id[ids[3]][6] == ["injection"] and "paxo" in by_id[ids[4]][2]
        # A change of a column the rail does not read leaves block_terms' row alone (no dead tuple either).
        xmin = conn.execute("SELECT xmin::text FROM memvault.block_terms WHERE vault_id = %s AND block_id = %s",
                            (vault.id, ids[5])).fetchone()[0]
        conn.execute("UPDATE memvault.block SET ppr_score = 0.5, tier = 'warm' WHERE vault_id = %s AND id = %s",
                     (vault.id, ids[5]))
        assert conn.execute("SELECT xmin::text FROM memvault.block_terms WHERE vault_id = %s AND block_id = %s",
                            (vault.id, ids[5])).fetchone()[0] == xmin
        # A deleted block's row goes with it (the cascade); a purged memory's too.
        conn.execute("UPDATE memvault.block SET superseded_by = NULL WHERE vault_id = %s", (vault.id,))
        conn.execute("DELETE FROM memvault.block WHERE vault_id = %s AND content LIKE 'bulk%%'", (vault.id,))
        assert conn.execute("SELECT memvault.purge_block_v1(%s, %s)", (vault.id, ids[5])).fetchone()[0] is not None
        blocks, terms = _mirror(conn, vault.id)
        assert len(terms) == len(blocks) and blocks == terms and ids[5] not in {t[0] for t in terms}
        # Purging the vault leaves nothing of it.
        conn.execute("SELECT memvault.purge_vault_v1(%s)", (vault.id,))
        assert conn.execute("SELECT count(*) FROM memvault.block_terms WHERE vault_id = %s",
                            (vault.id,)).fetchone()[0] == 0


async def test_a_vault_transaction_sees_only_its_vaults_terms(services, service_db_url: str) -> None:
    a = await create_vault(services.db, "terms-a")
    b = await create_vault(services.db, "terms-b")
    await put_blocks(services, a, ["Lighthouse keeper's log, north coast", "Lighthouse lamp replaced"])
    await put_blocks(services, b, ["Lighthouse tour booked for Sunday"])
    async with services.db.transaction(a.id) as conn:
        rows = await (await conn.execute("SELECT vault_id FROM memvault.block_terms")).fetchall()
        assert len(rows) == 2 and {r["vault_id"] for r in rows} == {a.id}
        # It cannot write a row for another vault either (the policy's WITH CHECK).
        try:
            await conn.execute("UPDATE memvault.block_terms SET vault_id = %s", (b.id,))
        except psycopg.errors.InsufficientPrivilege:
            pass
        else:
            raise AssertionError("a vault transaction moved its terms into another vault")
    # The service's own login (memvault_service): no vault set, no vault's rows; vault A set, A's only.
    with psycopg.connect(service_db_url) as conn:
        assert conn.execute("SELECT count(*) FROM memvault.block_terms").fetchone()[0] == 0
        conn.execute("SELECT set_config('memvault.vault_id', %s, true)", (str(a.id),))
        assert conn.execute("SELECT DISTINCT vault_id FROM memvault.block_terms").fetchall() == [(a.id,)]


# The rails' scans as they read memvault.block before 0028 (the reference the narrow table must reproduce).
OLD_V1 = """
SELECT array_agg(x.id ORDER BY x.sc DESC, x.id) FROM (
    SELECT b.id,
           (SELECT sum(w.idf) FROM unnest(%(terms)s::tsquery[], %(idf)s::float8[]) AS w(q, idf) WHERE b.tsv @@ w.q)
           + 0.01 * ts_rank(b.tsv, %(any)s::tsquery, 8) AS sc
    FROM memvault.block b
    WHERE b.vault_id = %(vault)s AND b.tsv @@ %(any)s::tsquery
      AND (%(past)s OR (b.retracted_at IS NULL AND b.valid_at <= %(as_of)s
                        AND (b.invalid_at IS NULL OR b.invalid_at > %(as_of)s)))
      AND NOT (b.quarantine_tags && %(noise)s::text[])
    ORDER BY sc DESC, b.id LIMIT %(n)s) x"""
OLD_V2 = """
SELECT array_agg(x.id ORDER BY x.sc DESC, x.id) FROM (
    SELECT b.id,
           coalesce((SELECT sum(w.idf * (1.2 + 1) * u.tf
                                / (u.tf + 1.2 * (1 - 0.75 + 0.75 * length(b.tsv)
                                                            / coalesce(%(avg)s::float8, length(b.tsv)))))
                     FROM (SELECT e.lexeme, coalesce(cardinality(e.positions), 1)::double precision AS tf
                           FROM unnest(b.tsv) AS e WHERE e.lexeme = ANY (%(lexemes)s::text[])) u
                     JOIN unnest(%(lexemes)s::text[], %(idf)s::float8[]) AS w(lexeme, idf)
                       ON w.lexeme = u.lexeme), 0)
           + 0.01 * ts_rank(b.tsv, %(any)s::tsquery, 8) AS sc
    FROM memvault.block b
    WHERE b.vault_id = %(vault)s AND b.tsv @@ %(any)s::tsquery
      AND (%(past)s OR (b.retracted_at IS NULL AND b.valid_at <= %(as_of)s
                        AND (b.invalid_at IS NULL OR b.invalid_at > %(as_of)s)))
      AND NOT (b.quarantine_tags && %(noise)s::text[])
    ORDER BY sc DESC, b.id LIMIT %(n)s) x"""
NEW_V1 = ("SELECT memvault._sparse_rail_v1(%(vault)s, %(terms)s::tsquery[], %(idf)s::float8[], %(any)s::tsquery, "
          "%(as_of)s, %(past)s, %(noise)s::text[], %(n)s)")
NEW_V2 = ("SELECT memvault._sparse_rail_v2(%(vault)s, %(lexemes)s::text[], %(idf)s::float8[], %(any)s::tsquery, "
          "%(as_of)s, %(past)s, %(noise)s::text[], %(n)s, 1.2, 0.75, %(avg)s::float8)")


async def test_the_narrow_rail_gives_the_old_rails_results(services, vault, db_url: str) -> None:
    now = datetime.now(UTC)
    topics = ["ferry", "harbour", "lemon", "olive", "kayak", "ferry harbour", "lemon olive ferry"]
    mems = [Mem(f"{topics[i % len(topics)]} note {i}: the {topics[(i * 3) % len(topics)]} again",
                days_ago=(i % 9) * 2.0) for i in range(70)]
    ids = await put_blocks(services, vault, mems)
    with psycopg.connect(db_url, autocommit=True) as conn:
        for k, old in enumerate(ids[:50]):  # superseded (invalid since 3 days), retracted, quarantined
            if k % 5 == 0:
                conn.execute("UPDATE memvault.block SET invalid_at = %s, superseded_by = %s "
                             "WHERE vault_id = %s AND id = %s", (now - timedelta(days=3), ids[-1], vault.id, old))
            elif k % 5 == 1:
                conn.execute("UPDATE memvault.block SET retracted_at = %s WHERE vault_id = %s AND id = %s",
                             (now - timedelta(days=1), vault.id, old))
            elif k % 5 == 2:
                conn.execute("UPDATE memvault.block SET quarantine_tags = '{injection}' "
                             "WHERE vault_id = %s AND id = %s", (vault.id, old))
        conn.execute("SELECT set_config('memvault.vault_id', %s, false)", (str(vault.id),))
        compared = 0
        # ... and more than the 16 terms _sparse_rail_v1 scores one CASE each (its subquery then)
        many = ["ferri", "harbour", "lemon", "oliv", "kayak", "note", "again"] + [f"zz{i}" for i in range(11)]
        for words in (["ferri"], ["ferri", "harbour"], ["lemon", "oliv", "kayak"], ["note"], many):
            terms = [f"'{w}'" for w in words]
            any_q = " | ".join(terms)
            idf = [1.0 + 0.37 * i for i in range(len(words))]
            for past, as_of in ((False, now), (False, now - timedelta(days=5)), (True, now)):
                for noise, n in (([], 200), (["injection", "spam"], 200), (["injection"], 7)):
                    p = {"vault": vault.id, "terms": terms, "lexemes": words, "idf": idf, "any": any_q,
                         "as_of": as_of, "past": past, "noise": noise, "n": n, "avg": 6.5}
                    for old, new in ((OLD_V1, NEW_V1), (OLD_V2, NEW_V2)):
                        want = conn.execute(old, p).fetchone()[0]
                        got = conn.execute(new, p).fetchone()[0]
                        assert got == want, (words, past, as_of, noise, n)
                        compared += bool(want)
                    p["avg"] = None
                    assert conn.execute(NEW_V2, p).fetchone()[0] == conn.execute(OLD_V2, p).fetchone()[0]
        assert compared >= 60  # the comparisons had results to compare


async def test_the_sparse_baseline_reads_block_terms_and_block_tsv_has_no_index(services, vault, db_url: str) -> None:
    """Revision 0029 dropped block.tsv's GIN index (each block written paid two GIN indexes); the benchmarks'
    sparse baseline, its last reader through `@@`, reads block_terms and answers as it did over block."""
    from app.bench.baselines import _VALID, BaselineRetriever

    old_sparse = f"""
        SELECT b.id FROM memvault.block b, memvault.sparse_query_v1(%(query)s) AS q
        WHERE {_VALID} AND b.tsv @@ q ORDER BY ts_rank_cd(b.tsv, q) DESC, b.id LIMIT %(n)s"""
    now = datetime.now(UTC)
    ids = await put_blocks(services, vault, [Mem(f"ferry {'harbour ' * (i % 4)}note {i}", days_ago=i % 5 * 2.0)
                                             for i in range(30)])
    with psycopg.connect(db_url, autocommit=True) as conn:
        assert conn.execute("SELECT to_regclass('memvault.block_tsv_idx')").fetchone()[0] is None
        assert conn.execute("SELECT to_regclass('memvault.block_terms_tsv_idx')").fetchone()[0] is not None
        conn.execute("UPDATE memvault.block SET invalid_at = %s WHERE vault_id = %s AND id = ANY(%s)",
                     (now - timedelta(days=3), vault.id, ids[:6]))
        conn.execute("UPDATE memvault.block SET retracted_at = %s WHERE vault_id = %s AND id = ANY(%s)",
                     (now, vault.id, ids[6:9]))
    for as_of in (None, now - timedelta(days=5)):
        want = [int(r["id"]) for r in await services.db.fetchall(
            old_sparse, {"vault": vault.id, "as_of": as_of, "n": 20, "query": "harbour ferry"}, vault_id=vault.id)]
        got = await BaselineRetriever(services, "sparse")(vault, "harbour ferry", as_of=as_of, n=20)
        assert got == want and len(got) >= 5
        assert set(ids[6:9]).isdisjoint(got)
