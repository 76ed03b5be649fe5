-- Per-vault export and import (app/portability/): the rows of one vault as JSON, and a vault re-created from
-- such rows staged in a temporary table. Applied at head (app/db/migrate.py).
--
-- Rows are whole table rows (to_jsonb), so a column added later travels without a change here; derived data is
-- left out and recomputed on import: the tsvector, the AGE graph (rebuilt from entities and triples), the
-- lexeme counts, the second rail's vectors (the worker refills them). Vectors travel only when asked for.

CREATE OR REPLACE FUNCTION memvault.export_rows_v1(p_vault uuid, p_embeddings boolean DEFAULT false)
    RETURNS TABLE (kind text, data jsonb)
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    (SELECT 'session', to_jsonb(s) - 'vault_id' FROM memvault.session s WHERE s.vault_id = p_vault ORDER BY s.id)
    UNION ALL
    (SELECT 'turn', to_jsonb(t) - 'vault_id' FROM memvault.turn t WHERE t.vault_id = p_vault ORDER BY t.id)
    UNION ALL
    (SELECT 'block',
            (to_jsonb(b) - ARRAY['vault_id', 'tsv', 'embedding'])
            || CASE WHEN p_embeddings AND b.embedding IS NOT NULL
                    THEN jsonb_build_object('embedding', b.embedding::text) ELSE '{}'::jsonb END
            || jsonb_build_object(
                'history', coalesce((SELECT jsonb_agg(to_jsonb(h) - ARRAY['vault_id', 'id'] ORDER BY h.version)
                                       FROM memvault.block_history h
                                      WHERE h.vault_id = p_vault AND h.id = b.id), '[]'::jsonb),
                'sources', coalesce((SELECT jsonb_agg(to_jsonb(s) - ARRAY['vault_id', 'block_id']
                                                      ORDER BY s.said_at, s.recorded_at, s.turn_id)
                                       FROM memvault.block_source s
                                      WHERE s.vault_id = p_vault AND s.block_id = b.id), '[]'::jsonb),
                'usage', (SELECT to_jsonb(u) - ARRAY['vault_id', 'block_id'] FROM memvault.block_usage u
                           WHERE u.vault_id = p_vault AND u.block_id = b.id))
       FROM memvault.block b WHERE b.vault_id = p_vault ORDER BY b.id)
    UNION ALL
    (SELECT 'entity',
            (to_jsonb(e) - ARRAY['vault_id', 'embedding'])
            || CASE WHEN p_embeddings AND e.embedding IS NOT NULL
                    THEN jsonb_build_object('embedding', e.embedding::text) ELSE '{}'::jsonb END
       FROM memvault.entity e WHERE e.vault_id = p_vault ORDER BY e.id)
    UNION ALL
    (SELECT 'alias', to_jsonb(a) - 'vault_id' FROM memvault.entity_alias a WHERE a.vault_id = p_vault
      ORDER BY a.alias_key)
    UNION ALL
    (SELECT 'triple', to_jsonb(t) - 'vault_id' FROM memvault.triple t WHERE t.vault_id = p_vault ORDER BY t.id)
    UNION ALL
    (SELECT 'lexeme_stats_state', to_jsonb(l) - 'vault_id' FROM memvault.lexeme_stats_state l
      WHERE l.vault_id = p_vault)
$$;
REVOKE ALL ON FUNCTION memvault.export_rows_v1(uuid, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memvault.export_rows_v1(uuid, boolean) TO memvault_app;

-- Move each identity sequence of the tables past the largest id in them (imported rows keep their ids).
CREATE OR REPLACE FUNCTION memvault._sync_identity_v1()
    RETURNS void
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, pg_catalog
    AS $$
DECLARE
    t   text;
    seq text;
    top bigint;
BEGIN
    FOREACH t IN ARRAY ARRAY['turn', 'block', 'entity', 'triple'] LOOP
        seq := pg_get_serial_sequence(format('memvault.%I', t), 'id');
        EXECUTE format('SELECT max(id) FROM memvault.%I', t) INTO top;
        IF top IS NOT NULL THEN
            EXECUTE format('SELECT setval(%L, greatest(%s, (SELECT last_value FROM %s)))', seq, top, seq);
        END IF;
    END LOOP;
END
$$;

-- Fill the (new, empty) vault p_vault from the rows staged in pg_temp.memvault_import (kind, ord, j, embedding:
-- app/portability/importer.py). Every row keeps its id; each table is filled in one statement, so references
-- inside a table (superseded_by) hold whatever the order. Returns the counts.
CREATE OR REPLACE FUNCTION memvault.import_staged_v1(p_vault uuid)
    RETURNS jsonb
    LANGUAGE plpgsql VOLATILE
    SET search_path = ag_catalog, memvault, public, pg_catalog
    AS $$
DECLARE
    v_counts jsonb := '{}'::jsonb;
    v_n      integer;
BEGIN
    INSERT INTO memvault.session
    SELECT x.* FROM pg_temp.memvault_import r,
           LATERAL jsonb_populate_record(NULL::memvault.session, r.j || jsonb_build_object('vault_id', p_vault)) x
     WHERE r.kind = 'session' ORDER BY r.ord;
    GET DIAGNOSTICS v_n = ROW_COUNT;
    v_counts := v_counts || jsonb_build_object('sessions', v_n);

    INSERT INTO memvault.turn OVERRIDING SYSTEM VALUE
    SELECT x.* FROM pg_temp.memvault_import r,
           LATERAL jsonb_populate_record(NULL::memvault.turn, r.j || jsonb_build_object('vault_id', p_vault)) x
     WHERE r.kind = 'turn' ORDER BY r.ord;
    GET DIAGNOSTICS v_n = ROW_COUNT;
    v_counts := v_counts || jsonb_build_object('turns', v_n);

    INSERT INTO memvault.block OVERRIDING SYSTEM VALUE
    SELECT x.* FROM pg_temp.memvault_import r,
           LATERAL jsonb_populate_record(NULL::memvault.block,
               (r.j - ARRAY['history', 'sources', 'usage', 'embedding']) || jsonb_build_object(
                   'vault_id', p_vault,
                   'embedding', coalesce(r.embedding::text, r.j->>'embedding'),
                   'tsv', memvault.sparse_document_v1(concat_ws(' ', r.j->>'content',
                                                      nullif(r.j->>'normalized', r.j->>'content'),
                                                      r.j->'metadata'->>'context'))::text)) x
     WHERE r.kind = 'block' ORDER BY r.ord;
    GET DIAGNOSTICS v_n = ROW_COUNT;
    v_counts := v_counts || jsonb_build_object('blocks', v_n);

    INSERT INTO memvault.block_history
    SELECT x.* FROM pg_temp.memvault_import r, jsonb_array_elements(r.j->'history') h,
           LATERAL jsonb_populate_record(NULL::memvault.block_history,
               h || jsonb_build_object('vault_id', p_vault, 'id', r.j->'id')) x
     WHERE r.kind = 'block';
    INSERT INTO memvault.block_source
    SELECT x.* FROM pg_temp.memvault_import r, jsonb_array_elements(r.j->'sources') s,
           LATERAL jsonb_populate_record(NULL::memvault.block_source,
               s || jsonb_build_object('vault_id', p_vault, 'block_id', r.j->'id')) x
     WHERE r.kind = 'block';
    INSERT INTO memvault.block_usage
    SELECT x.* FROM pg_temp.memvault_import r,
           LATERAL jsonb_populate_record(NULL::memvault.block_usage,
               r.j->'usage' || jsonb_build_object('vault_id', p_vault, 'block_id', r.j->'id')) x
     WHERE r.kind = 'block' AND jsonb_typeof(r.j->'usage') = 'object';

    INSERT INTO memvault.entity OVERRIDING SYSTEM VALUE
    SELECT x.* FROM pg_temp.memvault_import r,
           LATERAL jsonb_populate_record(NULL::memvault.entity, (r.j - 'embedding') || jsonb_build_object(
               'vault_id', p_vault, 'embedding', coalesce(r.embedding::text, r.j->>'embedding'))) x
     WHERE r.kind = 'entity' ORDER BY r.ord;
    GET DIAGNOSTICS v_n = ROW_COUNT;
    v_counts := v_counts || jsonb_build_object('entities', v_n);

    INSERT INTO memvault.entity_alias
    SELECT x.* FROM pg_temp.memvault_import r,
           LATERAL jsonb_populate_record(NULL::memvault.entity_alias, r.j || jsonb_build_object('vault_id', p_vault)) x
     WHERE r.kind = 'alias' ORDER BY r.ord;

    INSERT INTO memvault.triple OVERRIDING SYSTEM VALUE
    SELECT x.* FROM pg_temp.memvault_import r,
           LATERAL jsonb_populate_record(NULL::memvault.triple, r.j || jsonb_build_object('vault_id', p_vault)) x
     WHERE r.kind = 'triple' ORDER BY r.ord;
    GET DIAGNOSTICS v_n = ROW_COUNT;
    v_counts := v_counts || jsonb_build_object('triples', v_n);

    PERFORM memvault._sync_identity_v1();
    v_counts := v_counts || jsonb_build_object('graph_edges', memvault.graph_rebuild_v1(p_vault));
    IF EXISTS (SELECT 1 FROM pg_temp.memvault_import WHERE kind = 'lexeme_stats_state') THEN
        PERFORM memvault.refresh_lexeme_stats_v1(p_vault);
    END IF;
    RETURN v_counts;
END
$$;
REVOKE ALL ON FUNCTION memvault.import_staged_v1(uuid) FROM PUBLIC;


-- After a logical restore (pg_dump / pg_restore) AGE 1.5's bare oids of each graph's schema (ag_graph.graphid,
-- ag_label.graph) still hold the source database's values, while ag_graph.namespace (a regnamespace, dumped by
-- name) is right: set them from it (apache/age issue 2503). One statement, so the foreign key between the two
-- holds at its end. Returns the number of graphs repaired. app/db/backup.py runs it after every restore.
CREATE OR REPLACE FUNCTION memvault.repair_graph_catalog_v1()
    RETURNS integer
    LANGUAGE plpgsql VOLATILE
    SET search_path = ag_catalog, pg_catalog
    AS $$
DECLARE
    v_n integer;
BEGIN
    WITH fix AS (
        SELECT graphid AS old, namespace::oid AS new FROM ag_catalog.ag_graph WHERE graphid <> namespace::oid
    ), g AS (
        UPDATE ag_catalog.ag_graph a SET graphid = fix.new FROM fix WHERE a.graphid = fix.old RETURNING 1
    ), l AS (
        UPDATE ag_catalog.ag_label l SET graph = fix.new FROM fix WHERE l.graph = fix.old RETURNING 1
    )
    SELECT count(*) INTO v_n FROM g;
    RETURN v_n;
END
$$;
REVOKE ALL ON FUNCTION memvault.repair_graph_catalog_v1() FROM PUBLIC;
