-- Per-vault HNSW indexes (see sql/incremental/010-vault-ann-index.sql): a vault of at least the threshold's
-- blocks has a partial index of its own, named after it. The catalog is the record: no table to keep in step.

-- The name of a vault's own HNSW index on memvault.block.
CREATE OR REPLACE FUNCTION memvault.ann_index_name_v1(p_vault uuid)
    RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT 'block_ann_' || replace(p_vault::text, '-', '') $$;

-- The HNSW parameters of a vault's own index, as pg_class.reloptions records them: the plan rebuilds an index
-- built with others (by hand, or before these changed). Weighed on the kept 100k vault against m 8 / 12 / 16 and
-- ef_construction 32 / 64 / 128 (docs/ann-params.md): none reached today's recall@10 against exact at 101k rows
-- for clearly less dense-rail CPU. ef_construction 128 came closest (0.3-1.2 ms less a search at the same
-- held-out recall over two builds, within what two builds of one definition differ by) and builds ~1.7 times as
-- long; lower ef_construction or m needs a larger ef_search for the same recall and costs more.
CREATE OR REPLACE FUNCTION memvault.ann_index_options_v1()
    RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT ARRAY['m=16', 'ef_construction=64'] $$;

-- The statement that builds a vault's own index (one definition for the worker, which runs it concurrently, and
-- for build_due_ann_indexes_v1), named p_name (default: the vault's index; app/db/ann_index.py builds a
-- replacement beside the index it replaces under another name).
CREATE OR REPLACE FUNCTION memvault.ann_index_ddl_v2(p_vault uuid, p_concurrently boolean DEFAULT true,
                                                     p_name text DEFAULT NULL)
    RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT format('CREATE INDEX %s IF NOT EXISTS %I ON memvault.block USING hnsw (embedding vector_cosine_ops) '
                  'WITH (%s) WHERE vault_id = %L::uuid',
                  CASE WHEN p_concurrently THEN 'CONCURRENTLY' ELSE '' END,
                  coalesce(p_name, memvault.ann_index_name_v1(p_vault)),
                  array_to_string(memvault.ann_index_options_v1(), ', '), p_vault)
$$;

-- The same statement under the vault's own index name (callers of before ann_index_ddl_v2).
CREATE OR REPLACE FUNCTION memvault.ann_index_ddl_v1(p_vault uuid, p_concurrently boolean DEFAULT true)
    RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT memvault.ann_index_ddl_v2(p_vault, p_concurrently) $$;

-- Whether two reloptions lists say the same (in any order).
CREATE OR REPLACE FUNCTION memvault._same_options_v1(a text[], b text[])
    RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT coalesce(a @> b AND a <@ b, false) $$;

-- Whether the vault's own index exists and can be used (a concurrent build that failed leaves an invalid one).
-- plpgsql so that its plan is kept for the session: a LANGUAGE sql function with a SET clause is never inlined
-- and is planned again at every call (0.2 ms of the fast path's CPU, which asks on every recall).
CREATE OR REPLACE FUNCTION memvault.has_ann_index_v1(p_vault uuid)
    RETURNS boolean
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    SET search_path = memvault, pg_catalog
    AS $$
BEGIN
    RETURN EXISTS (
        SELECT 1 FROM pg_catalog.pg_class c
        JOIN pg_catalog.pg_index i ON i.indexrelid = c.oid
        WHERE c.relnamespace = 'memvault'::regnamespace AND c.relname = memvault.ann_index_name_v1(p_vault)
          AND i.indisvalid AND i.indisready);
END
$$;

-- The hnsw.ef_search a search of the vault's own index runs at: p_base (search.ef_search) up to 50,000 rows in
-- the index, then growing as (rows / 50,000)^0.55, so that recall against exact search holds as a vault grows.
-- Calibrated with `memvault bench latency` (app/bench/spread.py's ann_recall, m 16 / ef_construction 64) on the
-- first 100 dev questions: 10k rows 0.989 at ef 100; 101k rows 0.977 at 100, 0.985 at 120, 0.990 at 146 (this
-- rule: 148), 0.995 at 180; 1,014,916 rows 0.909 at 100, 0.966 at 400, 0.988 at 500 (this rule: 524), 0.996 at 700.
-- Held out (the odd-numbered half of all 556 dev questions, which no choice of ef looked at; docs/ann-params.md):
-- 101k rows 0.9705 at 148 (0.982 needs ~220), 1M rows 0.991 at 524.
-- The first rule (rows^0.7 past 100k) gave 101 at 101k rows: 0.977. Rows are the index's own count
-- (pg_class.reltuples, kept by CREATE INDEX and vacuum): no count of the vault on the fast path. Capped at 1,000
-- (pgvector's maximum).
CREATE OR REPLACE FUNCTION memvault.ann_ef_search_v1(p_vault uuid, p_base integer)
    RETURNS integer
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    SET search_path = memvault, pg_catalog
    AS $$
DECLARE
    v_rows double precision;
BEGIN
    SELECT c.reltuples INTO v_rows FROM pg_catalog.pg_class c
    WHERE c.relnamespace = 'memvault'::regnamespace AND c.relname = memvault.ann_index_name_v1(p_vault);
    IF v_rows IS NULL OR v_rows <= 50000 THEN
        RETURN p_base;
    END IF;
    RETURN least(1000, ceil(p_base * power(v_rows / 50000, 0.55)))::integer;
END
$$;

-- For a DBA: each vault's own index, its size and whether it is usable.
CREATE OR REPLACE VIEW memvault.vault_ann_indexes AS
SELECT v.id AS vault_id, v.name AS vault, c.relname AS index_name, i.indisvalid AND i.indisready AS usable,
       pg_catalog.pg_size_pretty(pg_catalog.pg_relation_size(c.oid)) AS size, c.reloptions AS options
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_index i ON i.indexrelid = c.oid
LEFT JOIN memvault.vault v ON memvault.ann_index_name_v1(v.id) = c.relname
WHERE c.relnamespace = 'memvault'::regnamespace AND i.indrelid = 'memvault.block'::regclass
  AND c.relname LIKE 'block\_ann\_%';

-- What the per-vault indexes need ("blocks" is counted up to p_min_blocks): 'build' for a vault of at least
-- p_min_blocks blocks without an index, 'rebuild' for one whose index is invalid (left from a failed build) or was
-- built with other parameters than ann_index_options_v1's, 'drop' for the index of a vault that is gone or has
-- shrunk below half the threshold (and for a replacement left behind by a rebuild that did not finish). The DDL
-- runs outside a transaction (CREATE INDEX CONCURRENTLY), so the caller executes it: app/db/ann_index.py.
CREATE OR REPLACE FUNCTION memvault.ann_index_plan_v1(p_min_blocks integer DEFAULT 5000)
    RETURNS TABLE (vault_id uuid, action text, index_name text, blocks bigint)
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    WITH vaults AS (  -- each vault counted up to the threshold (by its index): the job runs every minute
        SELECT v.id AS vault_id, memvault.ann_index_name_v1(v.id) AS index_name, n.blocks
        FROM memvault.vault v
        CROSS JOIN LATERAL (SELECT count(*) AS blocks FROM (
            SELECT 1 FROM memvault.block b WHERE b.vault_id = v.id LIMIT p_min_blocks) x) n
    ), existing AS (
        SELECT a.index_name::text AS index_name,
               a.usable AND memvault._same_options_v1(a.options, memvault.ann_index_options_v1()) AS current
        FROM memvault.vault_ann_indexes a
    )
    SELECT v.vault_id, CASE WHEN e.index_name IS NULL THEN 'build' ELSE 'rebuild' END, v.index_name, v.blocks
    FROM vaults v LEFT JOIN existing e ON e.index_name = v.index_name
    WHERE v.blocks >= p_min_blocks AND NOT coalesce(e.current, false)
    UNION ALL
    SELECT v.vault_id, 'drop', e.index_name, coalesce(v.blocks, 0)
    FROM existing e LEFT JOIN vaults v ON v.index_name = e.index_name
    WHERE v.vault_id IS NULL OR v.blocks < p_min_blocks / 2
$$;
REVOKE ALL ON FUNCTION memvault.ann_index_plan_v1(integer) FROM PUBLIC;

-- Carry out the plan inside the caller's transaction (not concurrently: writes to memvault.block wait for
-- it). For the migration that introduced the indexes and for `memvault reembed`, which hold the table anyway;
-- the worker builds concurrently (app/db/ann_index.py). A usable index built with other parameters is left to the
-- worker, which replaces it concurrently: rebuilding a large vault's index here would hold the block table's
-- writes for the length of the build (minutes at a million rows). Returns the number of indexes built or dropped.
CREATE OR REPLACE FUNCTION memvault.build_due_ann_indexes_v1(p_min_blocks integer DEFAULT 5000)
    RETURNS integer
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, public, pg_catalog
    AS $$
DECLARE
    r record;
    n integer := 0;
BEGIN
    FOR r IN SELECT * FROM memvault.ann_index_plan_v1(p_min_blocks) p
             WHERE NOT (p.action = 'rebuild' AND memvault.has_ann_index_v1(p.vault_id)) LOOP
        EXECUTE format('DROP INDEX IF EXISTS memvault.%I', r.index_name);
        IF r.action <> 'drop' THEN
            EXECUTE memvault.ann_index_ddl_v2(r.vault_id, false);
        END IF;
        n := n + 1;
    END LOOP;
    RETURN n;
END
$$;
REVOKE ALL ON FUNCTION memvault.build_due_ann_indexes_v1(integer) FROM PUBLIC;
