-- Vaults, their AGE graphs, the embedder record and log partitions. Applied at head (app/db/migrate.py).

-- A vault's AGE graph is for that vault's transactions only: AGE has no row-level security of its own, and
-- memvault_app may use every graph's schema, so each table of the graph (its labels and their parents) gets a
-- forced policy that lets memvault_app see and write it only while memvault.vault_id names the vault. Idempotent;
-- run again after adding a label.
CREATE OR REPLACE FUNCTION memvault.isolate_graph_v1(p_vault uuid, p_graph text)
    RETURNS integer
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, pg_catalog
    AS $$
DECLARE
    v_table regclass;
    v_count integer := 0;
BEGIN
    FOR v_table IN
        SELECT c.oid::regclass FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = p_graph AND c.relkind IN ('r', 'p')
           AND NOT EXISTS (SELECT 1 FROM pg_policy p WHERE p.polrelid = c.oid AND p.polname = 'vault_isolation')
    LOOP
        EXECUTE format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', v_table);
        EXECUTE format('ALTER TABLE %s FORCE ROW LEVEL SECURITY', v_table);
        EXECUTE format('CREATE POLICY vault_isolation ON %s TO memvault_app USING '
                       '(memvault.current_vault_id() = %L::uuid) WITH CHECK (memvault.current_vault_id() = %L::uuid)',
                       v_table, p_vault, p_vault);
        v_count := v_count + 1;
    END LOOP;
    RETURN v_count;
END
$$;

-- A vault and its own AGE graph, created together (Cypher then sees one vault's graph only).
CREATE OR REPLACE FUNCTION memvault.create_vault_v1(p_name text)
    RETURNS memvault.vault
    LANGUAGE plpgsql VOLATILE
    SET search_path = ag_catalog, memvault, pg_catalog
    AS $$
DECLARE
    v_id    uuid := gen_random_uuid();
    v_graph text := 'vg_' || replace(v_id::text, '-', '');
    v_row   memvault.vault;
BEGIN
    INSERT INTO memvault.vault (id, name, graph_name) VALUES (v_id, p_name, v_graph) RETURNING * INTO v_row;
    PERFORM ag_catalog.create_graph(v_graph::name);
    PERFORM ag_catalog.create_vlabel(v_graph::name, 'Entity'::name);
    PERFORM ag_catalog.create_elabel(v_graph::name, 'REL'::name);
    -- AGE does not index edge endpoints by itself.
    EXECUTE format('CREATE INDEX ON %I."REL" (start_id)', v_graph);
    EXECUTE format('CREATE INDEX ON %I."REL" (end_id)', v_graph);
    EXECUTE format('CREATE INDEX ON %I."Entity" USING gin (properties)', v_graph);
    EXECUTE format('GRANT USAGE ON SCHEMA %I TO memvault_app', v_graph);
    EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA %I TO memvault_app', v_graph);
    EXECUTE format('GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA %I TO memvault_app', v_graph);
    PERFORM memvault.isolate_graph_v1(v_id, v_graph);
    RETURN v_row;
END
$$;

-- Graphs of vaults created before isolate_graph_v1 existed (a no-op once every graph has its policies).
DO $$
BEGIN
    PERFORM memvault.isolate_graph_v1(v.id, v.graph_name) FROM memvault.vault v
     WHERE EXISTS (SELECT 1 FROM pg_namespace n WHERE n.nspname = v.graph_name);
END
$$;

-- Purge a vault: its graph and every row keyed by it (audit_log keeps its entries).
CREATE OR REPLACE FUNCTION memvault.drop_vault_v1(p_vault uuid)
    RETURNS boolean
    LANGUAGE plpgsql VOLATILE
    SET search_path = ag_catalog, memvault, pg_catalog
    AS $$
DECLARE
    v_graph text;
BEGIN
    SELECT graph_name INTO v_graph FROM memvault.vault WHERE id = p_vault;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    IF EXISTS (SELECT 1 FROM ag_catalog.ag_graph WHERE name = v_graph::name) THEN
        PERFORM ag_catalog.drop_graph(v_graph::name, true);
    END IF;
    DELETE FROM memvault.vault WHERE id = p_vault;
    RETURN true;
END
$$;

-- Records the embedder on first use and types the vector columns (HNSW needs a fixed dimension).
-- A different embedder later is an error (SQLSTATE MVEMB); `memvault reembed` moves a database.
CREATE OR REPLACE FUNCTION memvault.configure_embedder_v1(p_name text, p_dim integer)
    RETURNS memvault.embedder_config
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, public, pg_catalog
    AS $$
DECLARE
    v_cfg memvault.embedder_config;
BEGIN
    SELECT * INTO v_cfg FROM memvault.embedder_config FOR UPDATE;
    IF FOUND THEN
        IF v_cfg.name = p_name AND v_cfg.dim = p_dim THEN
            RETURN v_cfg;
        END IF;
        RAISE EXCEPTION 'this database was embedded with "%" (dim %), but the configured embedder is "%" (dim %)',
            v_cfg.name, v_cfg.dim, p_name, p_dim
            USING ERRCODE = 'MVEMB',
                  HINT = format('set MEMVAULT_EMBEDDER back, or run `memvault reembed --to ...` to move the database');
    END IF;
    EXECUTE format('ALTER TABLE memvault.block ALTER COLUMN embedding TYPE vector(%s)', p_dim);
    EXECUTE format('ALTER TABLE memvault.entity ALTER COLUMN embedding TYPE vector(%s)', p_dim);
    -- A new type resets the column's storage: vectors stay in the row (see 005-vector-storage.sql).
    ALTER TABLE memvault.block ALTER COLUMN embedding SET STORAGE MAIN;
    ALTER TABLE memvault.entity ALTER COLUMN embedding SET STORAGE MAIN;
    -- Blocks get no HNSW index over every vault: each large vault gets its own (012-ann-index.sql).
    EXECUTE 'CREATE INDEX IF NOT EXISTS entity_embedding_hnsw ON memvault.entity '
            'USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)';
    INSERT INTO memvault.embedder_config (name, dim) VALUES (p_name, p_dim) RETURNING * INTO v_cfg;
    RETURN v_cfg;
END
$$;

-- Monthly partitions of recall_log and audit_log, from this month to p_months_ahead months ahead.
CREATE OR REPLACE FUNCTION memvault.ensure_log_partitions_v1(p_months_ahead integer DEFAULT 2)
    RETURNS integer
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, pg_catalog
    AS $$
DECLARE
    v_table   text;
    v_start   date;
    v_name    text;
    v_created integer := 0;
BEGIN
    FOREACH v_table IN ARRAY ARRAY['recall_log', 'audit_log'] LOOP
        FOR i IN 0 .. p_months_ahead LOOP
            v_start := (date_trunc('month', now()) + make_interval(months => i))::date;
            v_name := format('%s_%s', v_table, to_char(v_start, 'YYYYMM'));
            IF to_regclass(format('memvault.%I', v_name)) IS NULL THEN
                EXECUTE format('CREATE TABLE memvault.%I PARTITION OF memvault.%I FOR VALUES FROM (%L) TO (%L)',
                               v_name, v_table, v_start, (v_start + interval '1 month')::date);
                v_created := v_created + 1;
            END IF;
        END LOOP;
    END LOOP;
    RETURN v_created;
END
$$;
