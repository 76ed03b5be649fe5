-- A lookup of one block by its key, (vault_id, id), reads one block row whatever block's statistics say.
--
-- When block was analyzed while a vault was small or absent (in a service, any vault created or grown since the
-- last ANALYZE; in the benchmark's database, every run's new vault), `vault_id = <it>` is estimated at one row, so
-- every btree index that starts with vault_id costs exactly what the primary key costs (one tuple, one page), and
-- the planner keeps the first of equal paths: it considers a table's indexes newest first (plancat.c,
-- get_relation_info's lcons). block_session_idx, then block_valid_idx, won, with `Filter: (id = ...)`: every
-- foreign-key check on block (block_source, block_read_verdict, block_history, superseded_by, ...) and every
-- by-key statement read the whole vault (docs/benchmarks.md, "Session close, round 5").
--
-- 1. block_session_idx becomes partial (WHERE session_id IS NOT NULL): every query that selects blocks by session
--    (`b.session_id = x`, `= ANY (...)`, a join on it) implies the predicate and still uses it; a lookup without a
--    session condition cannot; blocks without a session (the bulk path's memories) are no longer indexed in it.
-- 2. The primary key's index is rebuilt last, so that it is the newest btree on block and wins those ties. A new
--    index on block that starts with vault_id must be followed by the same rebuild
--    (tests/integration/test_block_plans.py fails otherwise). The foreign keys that reference it are dropped and
--    added back exactly as they were (pg_get_constraintdef), validated against the new index.
DROP INDEX memvault.block_session_idx;
CREATE INDEX block_session_idx ON memvault.block (vault_id, session_id) WHERE session_id IS NOT NULL;

CREATE TEMPORARY TABLE _block_fk ON COMMIT DROP AS
SELECT c.conrelid::regclass::text AS tbl, c.conname AS name, pg_get_constraintdef(c.oid) AS def
  FROM pg_constraint c
 WHERE c.contype = 'f' AND c.confrelid = 'memvault.block'::regclass;

DO $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT * FROM _block_fk LOOP
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', r.tbl, r.name);
    END LOOP;
    CREATE UNIQUE INDEX block_pkey_new ON memvault.block (vault_id, id);
    ALTER TABLE memvault.block DROP CONSTRAINT block_pkey;
    ALTER TABLE memvault.block ADD CONSTRAINT block_pkey PRIMARY KEY USING INDEX block_pkey_new;
    FOR r IN SELECT * FROM _block_fk LOOP
        EXECUTE format('ALTER TABLE %s ADD CONSTRAINT %I %s', r.tbl, r.name, r.def);
    END LOOP;
END
$$;
