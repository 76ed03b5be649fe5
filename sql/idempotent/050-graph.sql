-- The knowledge graph: relational entities and triples are the system of record; each vault's AGE graph
-- mirrors them in the same transaction and can be rebuilt from them (`memvault graph rebuild`).
-- Vertices :Entity {eid, name}; edges :REL {pred, tid, bid} (tid = triple id, bid = evidence block id).

-- Entities by canonical key: existing ones are returned (mention counted), missing ones created.
CREATE OR REPLACE FUNCTION memvault.upsert_entities_v1(p_vault uuid, p_entities jsonb, p_embeddings vector[])
    RETURNS TABLE (item integer, entity_id bigint, created boolean)
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, public, pg_catalog
    AS $$
BEGIN
    RETURN QUERY
    WITH src AS (
        SELECT x.ord::integer AS ord, x.e->>'name' AS name, x.e->>'key' AS key, x.e->>'kind' AS kind,
               p_embeddings[x.ord] AS emb
          FROM jsonb_array_elements(p_entities) WITH ORDINALITY AS x(e, ord)
    ), ins AS (
        -- mention_count is counted by add_entity_mentions_v1, once per memory that names the entity
        INSERT INTO memvault.entity AS t (vault_id, name, canonical_key, kind, embedding, mention_count)
        SELECT DISTINCT ON (key) p_vault, name, key, kind, emb, 0 FROM src ORDER BY key, ord
        ON CONFLICT (vault_id, canonical_key) DO UPDATE SET mention_count = t.mention_count
        RETURNING t.id, t.canonical_key, (xmax = 0) AS inserted
    )
    SELECT s.ord, i.id, i.inserted FROM src s JOIN ins i ON i.canonical_key = s.key;
    -- Each name is also an alias of its entity.
    INSERT INTO memvault.entity_alias (vault_id, alias_key, alias, entity_id, source)
    SELECT p_vault, e.key, e.name, en.id, 'name'
      FROM (SELECT x->>'key' AS key, x->>'name' AS name FROM jsonb_array_elements(p_entities) AS x) e
      JOIN memvault.entity en ON en.vault_id = p_vault AND en.canonical_key = e.key
    ON CONFLICT DO NOTHING;
END
$$;

-- Each entity's mentions: p_counts[i] more memories name entity p_ids[i] (a graph build counts each memory once).
CREATE OR REPLACE FUNCTION memvault.add_entity_mentions_v1(p_vault uuid, p_ids bigint[], p_counts integer[])
    RETURNS void
    LANGUAGE sql VOLATILE
    SET search_path = memvault, public, pg_catalog
    BEGIN ATOMIC
        UPDATE memvault.entity e SET mention_count = e.mention_count + x.n
          FROM unnest(p_ids, p_counts) AS x(id, n)
         WHERE e.vault_id = p_vault AND e.id = x.id;
    END;

CREATE OR REPLACE FUNCTION memvault.add_alias_v1(p_vault uuid, p_alias_key text, p_alias text, p_entity bigint,
                                                 p_source text)
    RETURNS void
    LANGUAGE sql VOLATILE
    SET search_path = memvault, public, pg_catalog
    BEGIN ATOMIC
        INSERT INTO memvault.entity_alias (vault_id, alias_key, alias, entity_id, source)
        VALUES (p_vault, p_alias_key, p_alias, p_entity, p_source)
        ON CONFLICT DO NOTHING;
    END;

-- Triples with valid time, each fact once. A triple the vault already holds as current (the same subject, predicate
-- and object, from whatever block: a turn's chunk and the unit the session's close extracts from it state the same
-- fact) is not added again, nor twice from one call; the rows returned are the ones added (item: the position in
-- p_triples). A new single-valued fact ends the valid time of the old one it replaces.
CREATE OR REPLACE FUNCTION memvault.insert_triples_v2(p_vault uuid, p_triples jsonb)
    RETURNS TABLE (item integer, triple_id bigint)
    LANGUAGE sql VOLATILE
    SET search_path = memvault, public, pg_catalog
    BEGIN ATOMIC
        WITH src AS (
            SELECT x.ord::integer AS ord, (x.t->>'subject_id')::bigint AS s, x.t->>'predicate' AS p,
                   (x.t->>'object_id')::bigint AS o, (x.t->>'block_id')::bigint AS b,
                   (x.t->>'confidence')::real AS c, (x.t->>'valid_at')::timestamptz AS v,
                   coalesce((x.t->>'single_valued')::boolean, false) AS single
              FROM jsonb_array_elements(p_triples) WITH ORDINALITY AS x(t, ord)
        ), ended AS (
            UPDATE memvault.triple t SET invalid_at = src.v
              FROM src
             WHERE src.single AND t.vault_id = p_vault AND t.subject_id = src.s AND t.predicate = src.p
               AND t.object_id <> src.o AND t.invalid_at IS NULL AND t.valid_at <= src.v
            RETURNING t.id
        ), fresh AS (
            SELECT DISTINCT ON (src.s, src.p, src.o) src.*
              FROM src
             WHERE NOT EXISTS (SELECT 1 FROM memvault.triple t
                                WHERE t.vault_id = p_vault AND t.subject_id = src.s AND t.predicate = src.p
                                  AND t.object_id = src.o AND t.invalid_at IS NULL)
             ORDER BY src.s, src.p, src.o, src.ord
        ), ins AS (
            INSERT INTO memvault.triple (vault_id, subject_id, predicate, object_id, evidence_block_id, confidence,
                                         valid_at)
            SELECT p_vault, s, p, o, b, c, v FROM fresh ORDER BY ord
            RETURNING id
        )
        SELECT f.ord, i.id
          FROM (SELECT id, row_number() OVER (ORDER BY id) AS rn FROM ins) i
          JOIN (SELECT ord, row_number() OVER (ORDER BY ord) AS rn FROM fresh) f USING (rn);
    END;

-- The relations a superseded memory stated end when the memory that replaced it starts (Dedup's SUPERSEDE of a
-- change: "switched to a Framework 13" ends "user uses a MacBook Pro"). Each of p_ends names one (subject_id,
-- predicate, object_id) read from the old block's text, the old block (block_id) and the time (at); the current
-- triple with those ends, drawn from the old block or from a chunk of the turns it came from (the turn's chunk
-- states a fact before the session's close extracts it), takes that invalid_at. Returns the triples ended.
CREATE OR REPLACE FUNCTION memvault.end_replaced_triples_v1(p_vault uuid, p_ends jsonb)
    RETURNS integer
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, public, pg_catalog
    AS $$
DECLARE
    v_count integer;
BEGIN
    UPDATE memvault.triple t SET invalid_at = greatest(x.at, t.valid_at)
      FROM (SELECT (e->>'subject_id')::bigint AS s, e->>'predicate' AS p, (e->>'object_id')::bigint AS o,
                   (e->>'block_id')::bigint AS old, (e->>'at')::timestamptz AS at
              FROM jsonb_array_elements(p_ends) AS e) x
      JOIN memvault.block ob ON ob.vault_id = p_vault AND ob.id = x.old
     WHERE t.vault_id = p_vault AND t.subject_id = x.s AND t.predicate = x.p AND t.object_id = x.o
       AND t.invalid_at IS NULL
       AND EXISTS (SELECT 1 FROM memvault.block e
                    WHERE e.vault_id = p_vault AND e.id = t.evidence_block_id
                      AND (e.id = ob.id OR e.kind = 'chunk' AND e.source_turn_ids && ob.source_turn_ids));
    GET DIAGNOSTICS v_count = ROW_COUNT;
    RETURN v_count;
END
$$;

-- Mirror new entities and triples into the vault's AGE graph.
CREATE OR REPLACE FUNCTION memvault.graph_add_v1(p_vault uuid, p_entities jsonb, p_edges jsonb)
    RETURNS integer
    LANGUAGE plpgsql VOLATILE
    SET search_path = ag_catalog, memvault, public, pg_catalog
    AS $$
DECLARE
    v_graph text;
    v_count integer := 0;
BEGIN
    SELECT graph_name INTO v_graph FROM memvault.vault WHERE id = p_vault;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'unknown vault %', p_vault USING ERRCODE = 'MV404';
    END IF;
    IF jsonb_array_length(p_entities) > 0 THEN
        EXECUTE format('SELECT count(*) FROM ag_catalog.cypher(%L, $c$ UNWIND $ents AS r '
                       'CREATE (:Entity {eid: r.id, name: r.name}) $c$, $1) AS (x ag_catalog.agtype)', v_graph)
            USING jsonb_build_object('ents', p_entities)::text::ag_catalog.agtype;
    END IF;
    IF jsonb_array_length(p_edges) > 0 THEN
        EXECUTE format('SELECT count(*) FROM ag_catalog.cypher(%L, $c$ UNWIND $rows AS r '
                       'MATCH (a:Entity {eid: r.s}), (b:Entity {eid: r.o}) '
                       'CREATE (a)-[e:REL {pred: r.p, tid: r.t, bid: r.b}]->(b) RETURN e $c$, $1) '
                       'AS (x ag_catalog.agtype)', v_graph)
            USING jsonb_build_object('rows', p_edges)::text::ag_catalog.agtype
            INTO v_count;
    END IF;
    RETURN v_count;
END
$$;

-- Rebuild a vault's graph from the relational tables (after a restore, or to repair drift).
CREATE OR REPLACE FUNCTION memvault.graph_rebuild_v1(p_vault uuid)
    RETURNS integer
    LANGUAGE plpgsql VOLATILE
    SET search_path = ag_catalog, memvault, public, pg_catalog
    AS $$
DECLARE
    v_graph text;
BEGIN
    SELECT graph_name INTO v_graph FROM memvault.vault WHERE id = p_vault;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'unknown vault %', p_vault USING ERRCODE = 'MV404';
    END IF;
    EXECUTE format('SELECT count(*) FROM ag_catalog.cypher(%L, $c$ MATCH (n) DETACH DELETE n $c$) '
                   'AS (x ag_catalog.agtype)', v_graph);
    RETURN memvault.graph_add_v1(
        p_vault,
        coalesce((SELECT jsonb_agg(jsonb_build_object('id', id, 'name', name)) FROM memvault.entity
                   WHERE vault_id = p_vault), '[]'::jsonb),
        coalesce((SELECT jsonb_agg(jsonb_build_object('s', subject_id, 'o', object_id, 'p', predicate, 't', id,
                                                      'b', evidence_block_id))
                    FROM memvault.triple WHERE vault_id = p_vault), '[]'::jsonb));
END
$$;

-- The graph's edge count next to the relational one, for health checks and tests.
CREATE OR REPLACE FUNCTION memvault.graph_counts_v1(p_vault uuid)
    RETURNS TABLE (vertices bigint, edges bigint)
    LANGUAGE plpgsql STABLE
    SET search_path = ag_catalog, memvault, public, pg_catalog
    AS $$
DECLARE
    v_graph text;
BEGIN
    SELECT graph_name INTO v_graph FROM memvault.vault WHERE id = p_vault;
    RETURN QUERY EXECUTE format(
        'SELECT (SELECT count(*) FROM %1$I."Entity"), (SELECT count(*) FROM %1$I."REL")', v_graph);
END
$$;
