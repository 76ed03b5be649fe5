"""The sparse rail's per-recall overheads, cut without changing a value (issue 33, docs/recall-cpu.md round 5):

- memvault.sparse_document_v1 calls cjk_bigrams (a sub-select, never inlined: each statement that calls it plans
  its body again) only for a text with a CJK character in it; any other text had '' for its bigrams;
- memvault.sparse_scan_v1 is plpgsql (its plan kept for the session) instead of sql (planned in every statement).

Both are checked here against their previous definitions (main e0806de), kept verbatim in pg_temp."""

from __future__ import annotations

import psycopg

# memvault.sparse_document_v1 and memvault.sparse_scan_v1 as they were (main e0806de), verbatim but for their names.
OLD = [r"""
CREATE FUNCTION pg_temp.sparse_document_old(p_text text)
    RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    RETURN to_tsvector('pg_catalog.english'::regconfig,
                       regexp_replace(p_text, '[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+', ' ', 'g'))
        || to_tsvector('pg_catalog.simple'::regconfig, memvault.cjk_bigrams(p_text))
""", r"""
CREATE FUNCTION pg_temp.sparse_scan_old(p_vault_blocks integer, p_max integer DEFAULT 5000,
                                        p_share double precision DEFAULT 0.025)
    RETURNS boolean
    LANGUAGE sql STABLE PARALLEL SAFE
    SET search_path = memvault, pg_catalog
    AS $$
    SELECT p_vault_blocks <= p_max
           AND p_vault_blocks < p_share * (SELECT c.reltuples FROM pg_catalog.pg_class c
                                           WHERE c.oid = 'memvault.block_terms'::regclass)
$$
"""]

TEXTS = [
    None, "", " ", "a", "The quick brown fox jumps over the lazy dogs.", "What did Caroline research?",
    "Melanie's kids painted a sunrise in July 2023 -- at 9:30am!", "我的猫叫什么名字", "中",
    "Caroline 去了 support group 昨天", "東京タワーに行きました", "한국어 텍스트 and English", "ｆｕｌｌ width",
    "emoji 🎉 party", "mixed 中文and English 和日本語カタカナ", "tabs\tand\nnewlines", "'quoted' & | ! operators",
    "ąćęłńóśźż naïve café", "x" * 3000, "重复重复重复重复 repeated repeated",
]


def test_sparse_document_gives_what_it_gave_and_calls_cjk_bigrams_for_cjk_text_only(db_url: str) -> None:
    with psycopg.connect(db_url) as conn:
        for sql in OLD:
            conn.execute(sql)
        rows = conn.execute("SELECT t, memvault.sparse_document_v1(t) IS NOT DISTINCT FROM "
                            "pg_temp.sparse_document_old(t), memvault.sparse_document_v1(t) "
                            "FROM unnest(%s::text[]) AS t", (TEXTS,)).fetchall()
        assert [r[0] for r in rows if not r[1]] == []
        assert rows[0][2] is None  # NULL in, NULL out, as when it was STRICT
        assert any("中文" in str(r[2]) for r in rows) and any("quick" in str(r[2]) for r in rows)  # both parts

        conn.execute("SET track_functions = 'all'")
        calls = "SELECT coalesce(pg_stat_get_xact_function_calls('memvault.cjk_bigrams'::regproc), 0)"
        for text, cjk in (("What did Caroline research?", False), ("Caroline 去了 support group", True)):
            before = conn.execute(calls).fetchone()[0]
            conn.execute("SELECT memvault.sparse_document_v1(%s)", (text,))
            assert conn.execute(calls).fetchone()[0] - before == (1 if cjk else 0), text


def test_sparse_scan_gives_what_it_gave(db_url: str) -> None:
    with psycopg.connect(db_url) as conn:
        for sql in OLD:
            conn.execute(sql)
        conn.execute("ANALYZE memvault.block_terms")
        lang = conn.execute("SELECT l.lanname FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang "
                            "WHERE p.oid = 'memvault.sparse_scan_v1(integer, integer, double precision)'"
                            "::regprocedure").fetchone()[0]
        assert lang == "plpgsql"
        # reltuples as the table has it (-1 before any ANALYZE of an empty table, 0 after), then as a big one's
        for reltuples in (None, 0, 2009, 1_000_000):
            if reltuples is not None:
                conn.execute("UPDATE pg_class SET reltuples = %s WHERE oid = 'memvault.block_terms'::regclass",
                             (reltuples,))
            rows = conn.execute(
                "SELECT n, mx, sh, memvault.sparse_scan_v1(n, mx, sh), pg_temp.sparse_scan_old(n, mx, sh) "
                "FROM unnest(ARRAY[NULL, 0, 9, 50, 2000, 5000, 5001, 24999]) AS n, "
                "unnest(ARRAY[5, 5000, NULL]) AS mx, unnest(ARRAY[0.025, 1, NULL]::float8[]) AS sh").fetchall()
            assert len(rows) == 72
            assert [r for r in rows if r[3] is not r[4]] == [], reltuples
            assert any(r[3] is True for r in rows) == (reltuples is not None and reltuples > 0)
        conn.rollback()
