-- Moving a database to another embedder (`memvault reembed --to NAME`): a shadow column is filled in
-- batches (resumable), recall keeps using the old vectors, and one transaction switches over.

CREATE OR REPLACE FUNCTION memvault.reembed_begin_v1(p_name text, p_dim integer)
    RETURNS memvault.embedder_config
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, public, pg_catalog
    AS $$
DECLARE
    v_cfg memvault.embedder_config;
BEGIN
    SELECT * INTO v_cfg FROM memvault.embedder_config FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no embedder is recorded yet' USING ERRCODE = 'MV422',
            HINT = 'start the service once; a fresh database takes the configured embedder directly';
    END IF;
    IF v_cfg.next_name IS NOT NULL AND (v_cfg.next_name, v_cfg.next_dim) IS DISTINCT FROM (p_name, p_dim) THEN
        RAISE EXCEPTION 'a move to "%" (dim %) is in progress', v_cfg.next_name, v_cfg.next_dim
            USING ERRCODE = 'MV409', HINT = 'finish it with the same --to, or run `memvault reembed --abort`';
    END IF;
    IF v_cfg.next_name IS NULL THEN
        EXECUTE format('ALTER TABLE memvault.block ADD COLUMN IF NOT EXISTS embedding_next vector(%s)', p_dim);
        EXECUTE format('ALTER TABLE memvault.entity ADD COLUMN IF NOT EXISTS embedding_next vector(%s)', p_dim);
        ALTER TABLE memvault.block ALTER COLUMN embedding_next SET STORAGE MAIN;  -- in the row (005-vector-storage)
        ALTER TABLE memvault.entity ALTER COLUMN embedding_next SET STORAGE MAIN;
        UPDATE memvault.embedder_config SET next_name = p_name, next_dim = p_dim RETURNING * INTO v_cfg;
    END IF;
    RETURN v_cfg;
END
$$;

CREATE OR REPLACE FUNCTION memvault.reembed_abort_v1()
    RETURNS void
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, public, pg_catalog
    AS $$
BEGIN
    ALTER TABLE memvault.block DROP COLUMN IF EXISTS embedding_next;
    ALTER TABLE memvault.entity DROP COLUMN IF EXISTS embedding_next;
    UPDATE memvault.embedder_config SET next_name = NULL, next_dim = NULL;
END
$$;

-- The switch: new vectors become the embedding columns, the entity HNSW index is rebuilt (the vaults' own block
-- indexes are dropped with the old column; the background, or `memvault reembed` itself, builds them again), the
-- record updated.
CREATE OR REPLACE FUNCTION memvault.reembed_switch_v1()
    RETURNS memvault.embedder_config
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, public, pg_catalog
    AS $$
DECLARE
    v_cfg memvault.embedder_config;
    v_left bigint;
BEGIN
    SELECT * INTO v_cfg FROM memvault.embedder_config FOR UPDATE;
    IF v_cfg.next_name IS NULL THEN
        RAISE EXCEPTION 'no move in progress' USING ERRCODE = 'MV409';
    END IF;
    EXECUTE 'SELECT count(*) FROM memvault.block WHERE embedding_next IS NULL' INTO v_left;
    IF v_left > 0 THEN
        RAISE EXCEPTION '% blocks still lack the new vectors', v_left USING ERRCODE = 'MV409',
            HINT = 'run `memvault reembed --to ...` again to finish';
    END IF;
    DROP INDEX IF EXISTS memvault.entity_embedding_hnsw;  -- the vaults' block_ann_* go with the old column
    ALTER TABLE memvault.block DROP COLUMN embedding;
    ALTER TABLE memvault.block RENAME COLUMN embedding_next TO embedding;
    ALTER TABLE memvault.entity DROP COLUMN embedding;
    ALTER TABLE memvault.entity RENAME COLUMN embedding_next TO embedding;
    CREATE INDEX entity_embedding_hnsw ON memvault.entity
        USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64);
    UPDATE memvault.embedder_config
       SET name = next_name, dim = next_dim, next_name = NULL, next_dim = NULL, configured_at = now()
    RETURNING * INTO v_cfg;
    RETURN v_cfg;
END
$$;
