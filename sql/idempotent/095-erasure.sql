-- Erasure: soft delete (the default), purge (hard delete: the content is gone from every table, graph, log and
-- queued job of the database) and the check that proves it (erasure_residue_v1). Re-applied by every migration.
--
-- The purge functions are SECURITY DEFINER and granted to no one but their owner: the service calls them on its
-- owner connection for an admin request. They are the one path that may rewrite audit_log rows: they set the
-- transaction-local GUC memvault.purge_vault to the vault being erased, and the append-only trigger
-- (memvault._audit_log_append_only, sql/incremental/017-access.sql) lets an UPDATE of that vault's rows through
-- (content columns only), nothing else.

DROP FUNCTION IF EXISTS memvault._audit_redact_v1(uuid, bigint[]);

-- Redact the content of audit rows of p_vault: all of them (p_blocks NULL), or those about p_blocks or holding
-- any of p_texts (the purged memories' and turns' words, as JSON writes them). What was done, when and by whom
-- stays; what was written goes: detail, and before / after where the table has them. A block.delete row holds
-- ids only (the deletion's own record) and stays as it is.
CREATE OR REPLACE FUNCTION memvault._audit_redact_v1(p_vault uuid, p_blocks bigint[] DEFAULT NULL,
                                                     p_texts text[] DEFAULT NULL)
    RETURNS integer
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, pg_catalog
    AS $$
DECLARE
    v_cols  text[];
    v_set   text;
    v_text  text;
    v_n     integer;
    v_needles text[];
BEGIN
    SELECT array_agg(attname::text ORDER BY attnum) INTO v_cols FROM pg_attribute
     WHERE attrelid = 'memvault.audit_log'::regclass AND attname IN ('detail', 'before', 'after')
       AND NOT attisdropped;
    SELECT string_agg(format('%1$I = CASE WHEN a.%1$I IS NULL THEN NULL ELSE %2$L::jsonb END', c,
                             '{"redacted": "erasure"}'), ', '),
           string_agg(format('coalesce(a.%I::text, %L)', c, ''), ' || ')
      INTO v_set, v_text FROM unnest(v_cols) AS c;
    -- Each text as it appears inside JSON (escaped), cut to 200 characters: enough to be specific.
    SELECT array_agg(left(substr(to_jsonb(t)::text, 2, length(to_jsonb(t)::text) - 2), 200))
      INTO v_needles FROM unnest(p_texts) AS t WHERE length(t) >= 8;
    PERFORM set_config('memvault.purge_vault', p_vault::text, true);
    EXECUTE format('UPDATE memvault.audit_log a SET %s WHERE a.vault_id = $1 '
                   'AND a.detail IS DISTINCT FROM %L::jsonb AND a.action <> %L '
                   'AND ($2::bigint[] IS NULL OR a.block_id = ANY ($2) '
                   '     OR EXISTS (SELECT 1 FROM unnest($3::text[]) n WHERE strpos(%s, n) > 0))',
                   v_set, '{"redacted": "erasure"}', 'block.delete', v_text)
        USING p_vault, p_blocks, coalesce(v_needles, '{}');
    GET DIAGNOSTICS v_n = ROW_COUNT;
    PERFORM set_config('memvault.purge_vault', '', true);
    RETURN v_n;
END
$$;
REVOKE ALL ON FUNCTION memvault._audit_redact_v1(uuid, bigint[], text[]) FROM PUBLIC;

-- Soft delete: the vault is marked deleted and refuses use; everything is kept (purge it to erase).
CREATE OR REPLACE FUNCTION memvault.soft_delete_vault_v1(p_vault uuid)
    RETURNS timestamptz
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, pg_catalog
    AS $$
DECLARE
    v_at timestamptz;
BEGIN
    UPDATE memvault.vault SET deleted_at = clock_timestamp()
     WHERE id = p_vault AND deleted_at IS NULL
    RETURNING deleted_at INTO v_at;  -- audited by the vault table's trigger (before / after)
    RETURN v_at;
END
$$;

-- Purge a vault: its graph, every row keyed by it (memories and their history, sources, turns, sessions,
-- entities, triples, usage, lexeme counts, second-rail vectors, the sparse rail's terms, caches, recall_log,
-- idempotency keys) and its queued jobs; its audit rows stay, redacted, with one more row saying it was purged.
-- Returns what went.
CREATE OR REPLACE FUNCTION memvault.purge_vault_v1(p_vault uuid)
    RETURNS jsonb
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = ag_catalog, memvault, public, pg_catalog
    AS $$
DECLARE
    v_graph  text;
    v_blocks bigint;
    v_jobs   integer := 0;
    v_logs   integer;
    v_audit  integer;
BEGIN
    SELECT graph_name INTO v_graph FROM memvault.vault WHERE id = p_vault FOR UPDATE;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    SELECT count(*) INTO v_blocks FROM memvault.block WHERE vault_id = p_vault;
    IF EXISTS (SELECT 1 FROM ag_catalog.ag_graph WHERE name = v_graph::name) THEN
        PERFORM ag_catalog.drop_graph(v_graph::name, true);
    END IF;
    -- Jobs that name the vault (a job being run now is left to fail on the missing vault).
    IF to_regclass('public.procrastinate_jobs') IS NOT NULL THEN
        EXECUTE 'DELETE FROM public.procrastinate_periodic_defers d USING public.procrastinate_jobs j '
                'WHERE d.job_id = j.id AND j.args->>''vault_id'' = $1 AND j.status <> ''doing'''
            USING p_vault::text;
        EXECUTE 'DELETE FROM public.procrastinate_jobs WHERE args->>''vault_id'' = $1 AND status <> ''doing'''
            USING p_vault::text;
        GET DIAGNOSTICS v_jobs = ROW_COUNT;
    END IF;
    -- Tables without a foreign key to the vault (logs are partitioned, the rest cascade from vault or block).
    DELETE FROM memvault.recall_log WHERE vault_id = p_vault;
    GET DIAGNOSTICS v_logs = ROW_COUNT;
    DELETE FROM memvault.block_history WHERE vault_id = p_vault;
    DELETE FROM memvault.block_source WHERE vault_id = p_vault;
    DELETE FROM memvault.block_usage WHERE vault_id = p_vault;
    DELETE FROM memvault.block_rail2 WHERE vault_id = p_vault;
    DELETE FROM memvault.block_terms WHERE vault_id = p_vault;
    DELETE FROM memvault.triple WHERE vault_id = p_vault;
    DELETE FROM memvault.entity_alias WHERE vault_id = p_vault;
    DELETE FROM memvault.turn WHERE vault_id = p_vault;
    DELETE FROM memvault.vault WHERE id = p_vault;
    v_audit := memvault._audit_redact_v1(p_vault);
    INSERT INTO memvault.audit_log (vault_id, actor, action, detail)
    VALUES (p_vault, memvault.audit_actor(), 'vault.purge',
            jsonb_build_object('blocks', v_blocks, 'jobs', v_jobs, 'recall_log', v_logs, 'audit_redacted', v_audit));
    RETURN jsonb_build_object('blocks', v_blocks, 'jobs', v_jobs, 'recall_log', v_logs, 'audit_redacted', v_audit);
END
$$;
REVOKE ALL ON FUNCTION memvault.purge_vault_v1(uuid) FROM PUBLIC;

-- Purge one memory. What it said may have been copied: into the turns it was said in (and the other memories
-- cut from those turns, which are purged with it), into a session's summary and thread map (cleared, and the
-- summary memories of those sessions purged), into the next turn's chunk as context (removed), into triples and
-- entities (the triples it is evidence of, and entities no triple refers to any more, from the tables and the
-- graph), recall_log queries that returned it (blanked), idempotency answers that name it, the prefetch cache
-- (the vault's is emptied) and the lexeme counts (recounted). Its audit rows are redacted. Returns what went,
-- or NULL when the memory does not exist.
CREATE OR REPLACE FUNCTION memvault.purge_block_v1(p_vault uuid, p_block bigint)
    RETURNS jsonb
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = ag_catalog, memvault, public, pg_catalog
    AS $$
DECLARE
    v_graph    text;
    v_turns    bigint[];
    v_sessions text[];
    v_blocks   bigint[];
    v_triples  bigint[];
    v_entities bigint[];
    v_audit    integer;
    v_logs     integer;
    v_texts    text[];
    v_names    text[] := '{}';
    v_table    text;
BEGIN
    SELECT graph_name INTO v_graph FROM memvault.vault WHERE id = p_vault;
    IF NOT EXISTS (SELECT 1 FROM memvault.block WHERE vault_id = p_vault AND id = p_block) THEN
        RETURN NULL;
    END IF;
    -- The turns it was said in, and every memory cut from them.
    SELECT coalesce(array_agg(DISTINCT t), '{}') INTO v_turns FROM (
        SELECT unnest(b.source_turn_ids) AS t FROM memvault.block b WHERE b.vault_id = p_vault AND b.id = p_block
        UNION SELECT s.turn_id FROM memvault.block_source s
         WHERE s.vault_id = p_vault AND s.block_id = p_block AND s.turn_id IS NOT NULL) x;
    SELECT coalesce(array_agg(DISTINCT session_id), '{}') INTO v_sessions
      FROM memvault.turn WHERE vault_id = p_vault AND id = ANY (v_turns);
    SELECT array_agg(DISTINCT id) INTO v_blocks FROM (
        SELECT p_block AS id
        UNION SELECT b.id FROM memvault.block b WHERE b.vault_id = p_vault AND b.source_turn_ids && v_turns
        UNION SELECT s.block_id FROM memvault.block_source s WHERE s.vault_id = p_vault AND s.turn_id = ANY (v_turns)
        UNION SELECT b.id FROM memvault.block b
         WHERE b.vault_id = p_vault AND b.kind IN ('summary', 'thread') AND b.session_id = ANY (v_sessions)) x;
    -- What they said, to find it in audit rows that do not name a block (turns, rejected writes).
    SELECT array_agg(t) INTO v_texts FROM (
        SELECT b.content AS t FROM memvault.block b WHERE b.vault_id = p_vault AND b.id = ANY (v_blocks)
        UNION SELECT h.content FROM memvault.block_history h WHERE h.vault_id = p_vault AND h.id = ANY (v_blocks)
        UNION SELECT t.content FROM memvault.turn t WHERE t.vault_id = p_vault AND t.id = ANY (v_turns)) x;
    -- Context copied from a purged turn into the next turn's chunk.
    UPDATE memvault.block b SET metadata = b.metadata - 'context'
     WHERE b.vault_id = p_vault AND b.session_id = ANY (v_sessions) AND NOT b.id = ANY (v_blocks)
       AND b.metadata ? 'context'
       AND EXISTS (SELECT 1 FROM memvault.turn t WHERE t.vault_id = p_vault AND t.id = ANY (v_turns)
                    AND strpos(t.content, b.metadata->>'context') > 0);
    UPDATE memvault.session SET summary = NULL, thread_map = NULL
     WHERE vault_id = p_vault AND id = ANY (v_sessions) AND (summary IS NOT NULL OR thread_map IS NOT NULL);
    -- Triples it is evidence of, and the entities left without a triple.
    SELECT coalesce(array_agg(id), '{}') INTO v_triples FROM memvault.triple
     WHERE vault_id = p_vault AND evidence_block_id = ANY (v_blocks);
    SELECT coalesce(array_agg(DISTINCT e), '{}') INTO v_entities FROM (
        SELECT unnest(ARRAY[t.subject_id, t.object_id]) AS e FROM memvault.triple t
         WHERE t.vault_id = p_vault AND t.id = ANY (v_triples)) x
     WHERE NOT EXISTS (SELECT 1 FROM memvault.triple t2
                        WHERE t2.vault_id = p_vault AND NOT t2.id = ANY (v_triples)
                          AND (t2.subject_id = x.e OR t2.object_id = x.e));
    -- The dream's derived rows that name those entities (communities and their summaries, skills, snapshots, lint
    -- findings) go with them; the next dream derives them again from what is left.
    SELECT coalesce(array_agg(e.name), '{}') INTO v_names FROM memvault.entity e
     WHERE e.vault_id = p_vault AND e.id = ANY (v_entities) AND length(e.name) >= 4;
    DELETE FROM memvault.triple WHERE vault_id = p_vault AND id = ANY (v_triples);
    DELETE FROM memvault.entity WHERE vault_id = p_vault AND id = ANY (v_entities);
    IF v_graph IS NOT NULL AND EXISTS (SELECT 1 FROM ag_catalog.ag_graph WHERE name = v_graph::name) THEN
        EXECUTE format('SELECT count(*) FROM ag_catalog.cypher(%L, $c$ MATCH ()-[e:REL]->() '
                       'WHERE e.tid IN $tids OR e.bid IN $bids DELETE e $c$, $1) AS (x ag_catalog.agtype)', v_graph)
            USING jsonb_build_object('tids', to_jsonb(v_triples), 'bids', to_jsonb(v_blocks))::text::ag_catalog.agtype;
        EXECUTE format('SELECT count(*) FROM ag_catalog.cypher(%L, $c$ MATCH (n:Entity) '
                       'WHERE n.eid IN $eids DETACH DELETE n $c$, $1) AS (x ag_catalog.agtype)', v_graph)
            USING jsonb_build_object('eids', to_jsonb(v_entities))::text::ag_catalog.agtype;
    END IF;
    -- Rows derived from it by the background track (the dream's review queue and discoveries) and knowledge gaps:
    -- any row of these tables whose JSON holds one of the purged texts goes.
    FOREACH v_table IN ARRAY ARRAY['review_queue', 'discovery_inbox', 'knowledge_gap', 'community_summary', 'attitude',
                                   'lint_finding', 'community', 'skill', 'daily_snapshot'] LOOP
        IF to_regclass(format('memvault.%I', v_table)) IS NOT NULL THEN
            EXECUTE format('DELETE FROM memvault.%I x WHERE x.vault_id = $1 AND EXISTS (SELECT 1 FROM unnest($2::text[]) t '
                           'WHERE length(t) >= 8 AND strpos(to_jsonb(x)::text, '
                           'left(substr(to_jsonb(t)::text, 2, length(to_jsonb(t)::text) - 2), 200)) > 0)', v_table)
                USING p_vault, coalesce(v_texts, '{}');
        END IF;
    END LOOP;
    FOREACH v_table IN ARRAY ARRAY['community', 'community_summary', 'skill', 'daily_snapshot', 'lint_finding',
                                   'discovery_inbox'] LOOP
        IF to_regclass(format('memvault.%I', v_table)) IS NOT NULL AND cardinality(v_names) > 0 THEN
            EXECUTE format('DELETE FROM memvault.%I x WHERE x.vault_id = $1 AND EXISTS (SELECT 1 FROM unnest($2::text[]) n '
                           'WHERE strpos(lower(to_jsonb(x)::text), lower(n)) > 0)', v_table)
                USING p_vault, v_names;
        END IF;
    END LOOP;
    -- Logs and caches that hold it.
    UPDATE memvault.recall_log SET query = '' WHERE vault_id = p_vault AND returned_ids && v_blocks AND query <> '';
    GET DIAGNOSTICS v_logs = ROW_COUNT;
    DELETE FROM memvault.prefetch_cache WHERE vault_id = p_vault;
    DELETE FROM memvault.idempotency_key k
     WHERE k.vault_id = p_vault
       AND (EXISTS (SELECT 1 FROM jsonb_path_query(k.response, 'lax $.**.block_id') AS j(v)
                     WHERE jsonb_typeof(j.v) = 'number' AND j.v::text::bigint = ANY (v_blocks))
            OR EXISTS (SELECT 1 FROM jsonb_path_query(k.response, 'lax $.**.turn_ids[*]') AS j(v)
                        WHERE jsonb_typeof(j.v) = 'number' AND j.v::text::bigint = ANY (v_turns)));
    -- The memories themselves (history, sources, usage and second-rail vectors go with them), then the turns.
    UPDATE memvault.block SET superseded_by = NULL
     WHERE vault_id = p_vault AND superseded_by = ANY (v_blocks) AND NOT id = ANY (v_blocks);
    DELETE FROM memvault.block WHERE vault_id = p_vault AND id = ANY (v_blocks);
    DELETE FROM memvault.turn WHERE vault_id = p_vault AND id = ANY (v_turns);
    IF EXISTS (SELECT 1 FROM memvault.lexeme_stats_state WHERE vault_id = p_vault) THEN
        PERFORM memvault.refresh_lexeme_stats_v1(p_vault);
    END IF;
    v_audit := memvault._audit_redact_v1(p_vault, v_blocks, v_texts);
    INSERT INTO memvault.audit_log (vault_id, actor, action, block_id, detail)
    VALUES (p_vault, memvault.audit_actor(), 'memory.purge', p_block,
            jsonb_build_object('blocks', to_jsonb(v_blocks), 'turns', cardinality(v_turns),
                               'triples', cardinality(v_triples), 'entities', cardinality(v_entities)));
    RETURN jsonb_build_object('blocks', to_jsonb(v_blocks), 'turns', cardinality(v_turns),
                              'triples', cardinality(v_triples), 'entities', cardinality(v_entities),
                              'recall_log', v_logs, 'audit_redacted', v_audit);
END
$$;
REVOKE ALL ON FUNCTION memvault.purge_block_v1(uuid, bigint) FROM PUBLIC;

-- Where a string remains: every table of the database (all schemas: memvault, the vaults' AGE graphs and
-- ag_catalog, procrastinate's, anything else), each row read as text, compared case-insensitively. A row per
-- table that still holds it, with the count. Run as the owner (row-level security would hide rows otherwise).
CREATE OR REPLACE FUNCTION memvault.erasure_residue_v1(p_marker text)
    RETURNS TABLE (schema_name text, table_name text, rows bigint)
    LANGUAGE plpgsql VOLATILE
    SET search_path = pg_catalog
    AS $$
DECLARE
    r record;
    n bigint;
BEGIN
    IF p_marker IS NULL OR length(p_marker) < 4 THEN
        RAISE EXCEPTION 'the marker must have at least 4 characters' USING ERRCODE = 'MV422';
    END IF;
    FOR r IN
        SELECT ns.nspname::text AS s, c.relname::text AS t
          FROM pg_class c JOIN pg_namespace ns ON ns.oid = c.relnamespace
         WHERE c.relkind IN ('r', 'm')
           AND ns.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
           AND ns.nspname NOT LIKE 'pg_temp%' AND ns.nspname NOT LIKE 'pg_toast_temp%'
         ORDER BY 1, 2
    LOOP
        EXECUTE format('SELECT count(*) FROM %I.%I x WHERE strpos(lower(x::text), lower($1)) > 0', r.s, r.t)
            INTO n USING p_marker;
        IF n > 0 THEN
            schema_name := r.s;
            table_name := r.t;
            rows := n;
            RETURN NEXT;
        END IF;
    END LOOP;
END
$$;
REVOKE ALL ON FUNCTION memvault.erasure_residue_v1(text) FROM PUBLIC;

-- The statements of a physical erasure (memvault purge --physical, app/db/scrub.py), in order: every table of the
-- database that is not PostgreSQL's own (memvault's, the job queue's, every AGE graph's; partitions one by one)
-- rewritten with VACUUM (FULL, ANALYZE), so that no page keeps a deleted row's bytes; then pg_statistic, where
-- ANALYZE's most common values of the old rows were, rewritten too (superuser only: p_catalog false leaves it).
-- VACUUM cannot run in a function, so this returns the text and the caller runs it, as ann_index_ddl_v2 does.
CREATE OR REPLACE FUNCTION memvault.scrub_statements_v1(p_catalog boolean DEFAULT true)
    RETURNS TABLE (statement text)
    LANGUAGE sql STABLE
    SET search_path = pg_catalog
    AS $$
    SELECT s FROM (
        SELECT format('VACUUM (FULL, ANALYZE) %I.%I', ns.nspname, c.relname) AS s, 0 AS o, ns.nspname, c.relname
          FROM pg_class c JOIN pg_namespace ns ON ns.oid = c.relnamespace
         WHERE c.relkind IN ('r', 'm')
           AND ns.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
           AND ns.nspname NOT LIKE 'pg_temp%' AND ns.nspname NOT LIKE 'pg_toast_temp%'
        UNION ALL
        SELECT 'VACUUM (FULL) pg_catalog.pg_statistic', 1, 'pg_catalog', 'pg_statistic' WHERE p_catalog
    ) x ORDER BY o, nspname, relname
$$;
REVOKE ALL ON FUNCTION memvault.scrub_statements_v1(boolean) FROM PUBLIC;
