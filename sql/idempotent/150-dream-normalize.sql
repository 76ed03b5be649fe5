-- The consolidate stage's normalization of stored facts (seed 004: "merging, replacing, regularizing of formats";
-- app/background/normalize.py). Applied at head (app/db/migrate.py).
--
-- Predicates: each triple's predicate folded (lower case, words joined by '_') and mapped to its canonical
-- predicate through predicate_alias ("resides in", "Lives-In" -> lives_in), so the slot scan and the lint's
-- grounding see one name per relation. Entities: the names Python cleaned (whitespace, stray quotes, dates in
-- ISO 8601) with the write track's canonical key: renamed, and those that now share a key merged into one (the
-- triples, aliases and mentions of the other moved to it). Both keep the AGE graph in step, both are idempotent
-- (a second pass finds nothing to do) and both write an audit row.

-- A predicate folded: trimmed, lower case, runs of spaces, hyphens, dots and slashes joined by '_'. Inlinable.
CREATE OR REPLACE FUNCTION memvault.fold_predicate_v1(p_predicate text)
    RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN coalesce(nullif(btrim(regexp_replace(lower(btrim(p_predicate)), '[[:space:]./-]+', '_', 'g'), '_'), ''),
                    p_predicate);

-- The canonical name of a predicate: the canonical predicate its folded form is, or names through
-- predicate_alias; else the folded form. (A string body: revision 0018 applies this file before
-- predicate_alias exists, with bodies unchecked.)
CREATE OR REPLACE FUNCTION memvault.canonical_predicate_of_v1(p_predicate text)
    RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
    SELECT coalesce((SELECT a.predicate FROM memvault.predicate_alias a
                     WHERE a.alias = memvault.fold_predicate_v1(p_predicate)),
                    memvault.fold_predicate_v1(p_predicate))
$$;

-- Rename the current vault's triples' predicates to their canonical names (at most p_limit a call), in the
-- tables and the graph. Returns {"triples": n, "renamed": {"from -> to": n, ...}}.
CREATE OR REPLACE FUNCTION memvault.normalize_predicates_v1(p_limit integer DEFAULT 5000)
    RETURNS jsonb
    LANGUAGE plpgsql VOLATILE
    SET search_path = ag_catalog, memvault, public, pg_catalog
    AS $$
DECLARE
    v_vault uuid := memvault.current_vault_id();
    v_graph text;
    v_rows  jsonb;
    v_by    jsonb;
BEGIN
    -- the vault's distinct predicates are mapped once (a few dozen), then only the triples of a changed one are
    -- touched: the mapping per triple row (a lookup not inlined, ~500 rows) took 13-38 s of a benchmark dream
    WITH preds AS (
        SELECT DISTINCT t.predicate AS old FROM memvault.triple t WHERE t.vault_id = v_vault
    ), map AS (
        SELECT m.old, m.new FROM (SELECT preds.old, memvault.canonical_predicate_of_v1(preds.old) AS new FROM preds) m
        WHERE m.old <> m.new
    ), todo AS (
        SELECT t.id, map.old, map.new
        FROM map JOIN memvault.triple t ON t.vault_id = v_vault AND t.predicate = map.old
        ORDER BY t.id LIMIT p_limit
    ), upd AS (
        UPDATE memvault.triple t SET predicate = todo.new
        FROM todo WHERE t.vault_id = v_vault AND t.id = todo.id
        RETURNING t.id, todo.old, todo.new
    )
    SELECT coalesce(jsonb_agg(jsonb_build_object('t', upd.id, 'p', upd.new)), '[]'),
           coalesce((SELECT jsonb_object_agg(k, n) FROM (SELECT u.old || ' -> ' || u.new AS k, count(*) AS n
                                                          FROM upd u GROUP BY 1) g), '{}')
      INTO v_rows, v_by
    FROM upd;
    IF jsonb_array_length(v_rows) = 0 THEN
        RETURN jsonb_build_object('triples', 0, 'renamed', '{}'::jsonb);
    END IF;
    SELECT v.graph_name INTO v_graph FROM memvault.vault v WHERE v.id = v_vault;
    EXECUTE format('SELECT count(*) FROM ag_catalog.cypher(%L, $c$ UNWIND $rows AS r '
                   'MATCH ()-[e:REL]->() WHERE e.tid = r.t SET e.pred = r.p $c$, $1) AS (x ag_catalog.agtype)',
                   v_graph)
        USING jsonb_build_object('rows', v_rows)::text::ag_catalog.agtype;
    INSERT INTO memvault.audit_log (vault_id, actor, action, detail)
    VALUES (v_vault, memvault.audit_actor('worker:dream'),
            'dream.normalize_predicates', jsonb_build_object('triples', jsonb_array_length(v_rows), 'renamed', v_by));
    RETURN jsonb_build_object('triples', jsonb_array_length(v_rows), 'renamed', v_by);
END
$$;

-- The current vault's entities the normalizer looks at: those created since p_since (all on the first dream),
-- at most p_limit, and every entity whose canonical key is one of p_keys (what a cleaned name may now equal).
CREATE OR REPLACE FUNCTION memvault.entities_to_normalize_v1(p_since timestamptz, p_limit integer DEFAULT 5000)
    RETURNS TABLE (entity_id bigint, name text, canonical_key text, mention_count integer)
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    SELECT e.id, e.name, e.canonical_key, e.mention_count FROM memvault.entity e
    WHERE e.vault_id = memvault.current_vault_id() AND e.created_at > coalesce(p_since, '-infinity')
    ORDER BY e.id LIMIT p_limit
$$;

CREATE OR REPLACE FUNCTION memvault.entities_by_keys_v1(p_keys text[])
    RETURNS TABLE (entity_id bigint, name text, canonical_key text, mention_count integer)
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    SELECT e.id, e.name, e.canonical_key, e.mention_count FROM memvault.entity e
    WHERE e.vault_id = memvault.current_vault_id() AND e.canonical_key = ANY (p_keys)
$$;

-- Apply the normalizer's plan to the current vault. p_merges: [{"drop": id, "keep": id}, ...]: the dropped
-- entity's triples (as subject or object), aliases and mentions move to the kept one, its name and key become
-- aliases of it, and it is deleted; in the graph its vertex goes and its edges are made again on the kept one.
-- p_renames: [{"id": id, "name": text, "key": text}, ...], applied after the merges: the entity's name and
-- canonical key change (a key another entity holds is skipped) and the old name stays as an alias.
-- Returns {"merged": n, "renamed": n}.
CREATE OR REPLACE FUNCTION memvault.normalize_entities_v1(p_merges jsonb, p_renames jsonb)
    RETURNS jsonb
    LANGUAGE plpgsql VOLATILE
    SET search_path = ag_catalog, memvault, public, pg_catalog
    AS $$
DECLARE
    v_vault   uuid := memvault.current_vault_id();
    v_graph   text;
    v_drop    bigint[];
    v_keep    bigint[];
    v_moved   bigint[];
    v_named   jsonb;
    v_merged  integer := 0;
    v_renamed integer := 0;
    v_actor   text := memvault.audit_actor('worker:dream');
BEGIN
    SELECT v.graph_name INTO v_graph FROM memvault.vault v WHERE v.id = v_vault;
    -- merges: only pairs of two existing, distinct entities, each dropped once, none kept that is also dropped
    SELECT coalesce(array_agg(x.d ORDER BY x.d), '{}'), coalesce(array_agg(x.k ORDER BY x.d), '{}')
      INTO v_drop, v_keep
    FROM (
        SELECT DISTINCT ON ((m->>'drop')::bigint) (m->>'drop')::bigint AS d, (m->>'keep')::bigint AS k
        FROM jsonb_array_elements(coalesce(p_merges, '[]')) m
        JOIN memvault.entity d ON d.vault_id = v_vault AND d.id = (m->>'drop')::bigint
        JOIN memvault.entity k ON k.vault_id = v_vault AND k.id = (m->>'keep')::bigint
        WHERE d.id <> k.id
    ) x
    WHERE x.k NOT IN (SELECT (m->>'drop')::bigint FROM jsonb_array_elements(coalesce(p_merges, '[]')) m);
    v_merged := cardinality(v_drop);
    IF v_merged > 0 THEN
        WITH u AS (
            UPDATE memvault.triple t SET subject_id = x.keep_id FROM unnest(v_drop, v_keep) AS x(drop_id, keep_id)
            WHERE t.vault_id = v_vault AND t.subject_id = x.drop_id RETURNING t.id)
        SELECT coalesce(array_agg(u.id), '{}') INTO v_moved FROM u;
        WITH u AS (
            UPDATE memvault.triple t SET object_id = x.keep_id FROM unnest(v_drop, v_keep) AS x(drop_id, keep_id)
            WHERE t.vault_id = v_vault AND t.object_id = x.drop_id RETURNING t.id)
        SELECT v_moved || coalesce(array_agg(u.id), '{}') INTO v_moved FROM u;
        UPDATE memvault.entity_alias a SET entity_id = x.keep_id FROM unnest(v_drop, v_keep) AS x(drop_id, keep_id)
        WHERE a.vault_id = v_vault AND a.entity_id = x.drop_id;
        INSERT INTO memvault.entity_alias (vault_id, alias_key, alias, entity_id, source)
        SELECT v_vault, d.canonical_key, d.name, x.keep_id, 'dream' FROM unnest(v_drop, v_keep) AS x(drop_id, keep_id)
        JOIN memvault.entity d ON d.vault_id = v_vault AND d.id = x.drop_id
        ON CONFLICT (vault_id, alias_key) DO UPDATE SET entity_id = excluded.entity_id;
        UPDATE memvault.entity k SET mention_count = k.mention_count + g.n
        FROM (SELECT x.keep_id, sum(d.mention_count) AS n FROM unnest(v_drop, v_keep) AS x(drop_id, keep_id)
              JOIN memvault.entity d ON d.vault_id = v_vault AND d.id = x.drop_id GROUP BY x.keep_id) g
        WHERE k.vault_id = v_vault AND k.id = g.keep_id;
        EXECUTE format('SELECT count(*) FROM ag_catalog.cypher(%L, $c$ MATCH (n:Entity) WHERE n.eid IN $eids '
                       'DETACH DELETE n $c$, $1) AS (x ag_catalog.agtype)', v_graph)
            USING jsonb_build_object('eids', to_jsonb(v_drop))::text::ag_catalog.agtype;
        -- the moved triples' edges that did not go with the dropped vertex go now, then all of them are made
        -- again between the kept vertices
        EXECUTE format('SELECT count(*) FROM ag_catalog.cypher(%L, $c$ MATCH ()-[e:REL]->() WHERE e.tid IN $tids '
                       'DELETE e $c$, $1) AS (x ag_catalog.agtype)', v_graph)
            USING jsonb_build_object('tids', to_jsonb(v_moved))::text::ag_catalog.agtype;
        PERFORM memvault.graph_add_v1(v_vault, '[]'::jsonb, coalesce((
            SELECT jsonb_agg(jsonb_build_object('s', t.subject_id, 'o', t.object_id, 'p', t.predicate, 't', t.id,
                                                'b', t.evidence_block_id))
            FROM memvault.triple t WHERE t.vault_id = v_vault AND t.id = ANY (v_moved)), '[]'::jsonb));
        DELETE FROM memvault.entity e WHERE e.vault_id = v_vault AND e.id = ANY (v_drop);
    END IF;

    WITH r AS (
        SELECT DISTINCT ON ((x->>'id')::bigint) (x->>'id')::bigint AS id, x->>'name' AS name, x->>'key' AS key
        FROM jsonb_array_elements(coalesce(p_renames, '[]')) x
        WHERE coalesce(x->>'name', '') <> '' AND coalesce(x->>'key', '') <> ''
    ), old AS (
        SELECT e.id, e.name, e.canonical_key FROM memvault.entity e JOIN r ON e.vault_id = v_vault AND e.id = r.id
    ), upd AS (
        UPDATE memvault.entity e SET name = r.name, canonical_key = r.key
        FROM r WHERE e.vault_id = v_vault AND e.id = r.id AND (e.name, e.canonical_key) IS DISTINCT FROM (r.name, r.key)
          AND NOT EXISTS (SELECT 1 FROM memvault.entity o WHERE o.vault_id = v_vault AND o.canonical_key = r.key
                                                             AND o.id <> r.id)
        RETURNING e.id, e.name
    ), alias AS (
        INSERT INTO memvault.entity_alias (vault_id, alias_key, alias, entity_id, source)
        SELECT v_vault, old.canonical_key, old.name, old.id, 'dream' FROM old JOIN upd ON upd.id = old.id
        WHERE old.canonical_key <> (SELECT r.key FROM r WHERE r.id = old.id)
        ON CONFLICT (vault_id, alias_key) DO NOTHING
    )
    SELECT count(*), coalesce(jsonb_agg(jsonb_build_object('id', upd.id, 'name', upd.name)), '[]')
      INTO v_renamed, v_named
    FROM upd;
    IF v_renamed > 0 THEN
        EXECUTE format('SELECT count(*) FROM ag_catalog.cypher(%L, $c$ UNWIND $rows AS r '
                       'MATCH (n:Entity) WHERE n.eid = r.id SET n.name = r.name $c$, $1) AS (x ag_catalog.agtype)',
                       v_graph)
            USING jsonb_build_object('rows', v_named)::text::ag_catalog.agtype;
    END IF;
    IF v_merged + v_renamed > 0 THEN
        INSERT INTO memvault.audit_log (vault_id, actor, action, detail)
        VALUES (v_vault, v_actor, 'dream.normalize_entities',
                jsonb_build_object('merged', coalesce((SELECT jsonb_agg(jsonb_build_object('drop', x.d, 'keep', x.k))
                                                       FROM unnest(v_drop, v_keep) AS x(d, k)), '[]'::jsonb),
                                   'renamed', v_named));
    END IF;
    RETURN jsonb_build_object('merged', v_merged, 'renamed', v_renamed);
END
$$;
