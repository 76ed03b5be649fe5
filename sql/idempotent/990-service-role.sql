-- What memvault_service (the role the API and the worker log in as, sql/incremental/023-service-role.sql) may do
-- beyond a vault transaction: the functions listed at the end of this file, and nothing else. Each runs as its
-- owner (SECURITY DEFINER: the role that migrates), does one narrow thing, and is granted to memvault_service (and
-- the owner); the few that vault transactions call too, and which then keep to that vault, also to memvault_app.
-- This file sorts last among the function files, so it is applied after them: CREATE OR REPLACE resets a
-- function's SECURITY attribute, and this one place sets it again at every upgrade.

-- The vault rows the service must find before it knows the vault (a request names it; a job is handed its id):
-- names and ids only lead to a vault transaction, which row-level security keeps to that vault.
CREATE OR REPLACE FUNCTION memvault.vault_by_name_v1(p_name text)
    RETURNS SETOF memvault.vault
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$ SELECT * FROM memvault.vault WHERE name = p_name $$;

CREATE OR REPLACE FUNCTION memvault.vault_by_id_v1(p_id uuid)
    RETURNS SETOF memvault.vault
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$ SELECT * FROM memvault.vault WHERE id = p_id $$;

-- Live vaults by name, a page at a time (GET /v1/vaults filters them by what the caller's key may see).
CREATE OR REPLACE FUNCTION memvault.list_vaults_v1(p_after text, p_limit integer)
    RETURNS SETOF memvault.vault
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    SELECT * FROM memvault.vault
     WHERE deleted_at IS NULL AND (p_after IS NULL OR name > p_after)
     ORDER BY name LIMIT p_limit
$$;

-- Sessions silent for p_idle_s seconds, every vault (the worker's idle-close job closes each in its vault).
CREATE OR REPLACE FUNCTION memvault.idle_sessions_v1(p_idle_s double precision)
    RETURNS TABLE (vault text, id text)
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    SELECT v.name, s.id FROM memvault.session s JOIN memvault.vault v ON v.id = s.vault_id
     WHERE s.closed_at IS NULL AND s.last_turn_at < now() - make_interval(secs => p_idle_s)
$$;

-- Vaults with blocks the second dense rail's model has not embedded (as they are now), for its job.
CREATE OR REPLACE FUNCTION memvault.rail2_vaults_due_v1(p_model text)
    RETURNS TABLE (id uuid)
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    SELECT v.id FROM memvault.vault v
     WHERE EXISTS (
        SELECT 1 FROM memvault.block b
        LEFT JOIN memvault.block_rail2 r ON r.vault_id = b.vault_id AND r.block_id = b.id
        WHERE b.embedding IS NOT NULL
          AND (r.block_id IS NULL OR r.model <> p_model OR r.content_hash <> b.content_hash)
          AND b.vault_id = v.id)
     ORDER BY v.created_at, v.id
$$;

DO $$
DECLARE
    v_entry text[];
    v_fn    regprocedure;
BEGIN
    FOREACH v_entry SLICE 1 IN ARRAY ARRAY[
        -- start-up: the embedder the database was embedded with, recorded once (columns typed) and checked after
        ['memvault.configure_embedder_v1(text, integer)', ''],
        -- vaults: find one by name or id, list them, create one with its graph, soft-delete, purge (erasure)
        ['memvault.vault_by_name_v1(text)', ''],
        ['memvault.vault_by_id_v1(uuid)', ''],
        ['memvault.list_vaults_v1(text, integer)', ''],
        ['memvault.create_vault_v1(text)', ''],
        ['memvault.soft_delete_vault_v1(uuid)', ''],
        ['memvault.purge_vault_v1(uuid)', ''],
        ['memvault.purge_block_v1(uuid, bigint)', ''],
        ['memvault.import_staged_v1(uuid)', ''],
        -- API keys: the guard's lookup (the argon2 hash is checked in Python) and the admins' key management
        ['memvault.api_key_lookup_v1(text)', ''],
        ['memvault.api_key_touch_v1(text)', ''],
        ['memvault.api_key_create_v1(text, text, text, uuid, text)', ''],
        ['memvault.api_key_list_v1(uuid, boolean)', ''],
        ['memvault.api_key_revoke_v1(text)', ''],
        ['memvault.api_key_active_count_v1()', ''],
        -- the worker's sweeps: which vaults are due for a job (each job then runs in its vault's transaction)
        ['memvault.idle_sessions_v1(double precision)', ''],
        ['memvault.rail2_vaults_due_v1(text)', ''],
        ['memvault.lexeme_stats_due_v1(integer, double precision)', ''],
        ['memvault.centrality_due_v1()', ''],
        ['memvault.ann_index_plan_v1(integer)', ''],
        ['memvault.dream_due_v1(timestamp with time zone, double precision, integer)', ''],
        ['memvault.set_dream_schedule_v1(uuid, text, integer)', ''],
        -- overdue review items (in a vault transaction: that vault's only)
        ['memvault.review_sweep_v1(timestamp with time zone, interval)', 'memvault_app'],
        -- the intent classifier's shared archetypes, embedded once per embedder
        ['memvault.set_archetype_embeddings_v1(text, bigint[], vector[])', ''],
        -- upkeep (160-upkeep.sql): the logs' monthly partitions, vacuum and bloat for `db stats` and /health
        ['memvault.maintain_log_partitions_v1(timestamp with time zone, integer, jsonb)', ''],
        ['memvault.db_stats_v1()', ''],
        ['memvault.upkeep_summary_v1(timestamp with time zone)', '']
    ]
    LOOP
        v_fn := v_entry[1]::regprocedure;
        EXECUTE format('ALTER FUNCTION %s SECURITY DEFINER', v_fn);
        EXECUTE format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', v_fn);
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO memvault_service', v_fn);
        IF v_entry[2] <> '' THEN
            EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %I', v_fn, v_entry[2]);
        END IF;
    END LOOP;
END
$$;
