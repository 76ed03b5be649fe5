-- Cascade recall (seed 000, section V), slow mode only. LOCAL: entities of the query and of the top hits, k-hop
-- expansion by Cypher in the vault's AGE graph, then (in Python) Personalized PageRank; GLOBAL: L1/L2 community
-- summaries. An empty graph, or no community tables yet, is a clean no-op. Applied at head.

-- Seed entities for the walk: named in the query (name or alias, at least 3 characters), linked to the top hits
-- by a triple's evidence, or nearest to the query vector (cosine >= p_min_cos). weight: 1.0 named, 0.6 nearest,
-- 0.5 from a hit.
CREATE OR REPLACE FUNCTION memvault.cascade_seed_entities_v1(p_query text, p_block_ids bigint[], p_qvec vector,
                                                             p_limit integer DEFAULT 20,
                                                             p_min_cos double precision DEFAULT 0.6)
    RETURNS TABLE (entity_id bigint, name text, weight double precision, why text)
    LANGUAGE sql STABLE
    SET search_path = memvault, public, pg_catalog
    AS $$
    WITH q AS (SELECT ' ' || lower(p_query) || ' ' AS lq),
    named AS (
        SELECT e.id, 1.0::double precision AS w, 'named'::text AS why FROM memvault.entity e, q
        WHERE e.vault_id = memvault.current_vault_id() AND length(e.name) >= 3
          AND position(lower(e.name) IN q.lq) > 0
        UNION ALL
        SELECT a.entity_id, 1.0, 'alias' FROM memvault.entity_alias a, q
        WHERE a.vault_id = memvault.current_vault_id() AND length(a.alias) >= 3
          AND position(lower(a.alias) IN q.lq) > 0
    ), hits AS (
        SELECT x.eid, 0.5::double precision, 'hit'::text FROM memvault.triple t
        CROSS JOIN LATERAL (VALUES (t.subject_id), (t.object_id)) AS x(eid)
        WHERE t.vault_id = memvault.current_vault_id() AND t.evidence_block_id = ANY (p_block_ids)
    ), near AS (
        SELECT n.id, 0.6::double precision, 'nearest'::text FROM (
            SELECT e.id, e.embedding <=> p_qvec AS d FROM memvault.entity e
            WHERE e.vault_id = memvault.current_vault_id() AND e.embedding IS NOT NULL AND p_qvec IS NOT NULL
            ORDER BY e.embedding <=> p_qvec LIMIT 5
        ) n WHERE 1 - n.d >= p_min_cos
    ), allx AS (
        SELECT * FROM named UNION ALL SELECT * FROM hits UNION ALL SELECT * FROM near
    )
    SELECT e.id, e.name, max(a.w), string_agg(DISTINCT a.why, ',')
    FROM allx a(id, w, why) JOIN memvault.entity e ON e.vault_id = memvault.current_vault_id() AND e.id = a.id
    GROUP BY e.id, e.name
    ORDER BY max(a.w) DESC, e.id
    LIMIT p_limit
$$;

-- k-hop neighbourhood of p_eids in the vault's graph, one Cypher query per hop (edges either way), each edge
-- once, joined back to memvault.triple so only triples valid at p_as_of count. Stops at p_max_edges. The two
-- directions are two directed MATCHes: AGE plans an undirected pattern as a nested loop over every vertex and
-- edge (120-165 ms for 5 seeds in a graph of 471 entities and 715 edges, growing with the product), the directed
-- ones as joins on the edge's start / end (2 ms).
CREATE OR REPLACE FUNCTION memvault.graph_expand_v1(p_eids bigint[], p_hops integer DEFAULT 2,
                                                    p_as_of timestamptz DEFAULT NULL,
                                                    p_max_edges integer DEFAULT 500)
    RETURNS TABLE (hop integer, subject_id bigint, object_id bigint, triple_id bigint, predicate text,
                   evidence_block_id bigint, confidence real)
    LANGUAGE plpgsql STABLE
    SET search_path = ag_catalog, memvault, public, pg_catalog
    AS $$
DECLARE
    v_graph    text;
    v_frontier bigint[] := p_eids;
    v_seen     bigint[] := p_eids;
    v_tids     bigint[] := '{}';
    v_hop      integer := 0;
    v_as_of    timestamptz := coalesce(p_as_of, now());
    v_rows     integer := 0;
    v_a        bigint[];
    v_b        bigint[];
    v_t        bigint[];
    r          record;
BEGIN
    SELECT v.graph_name INTO v_graph FROM memvault.vault v WHERE v.id = memvault.current_vault_id();
    IF v_graph IS NULL OR cardinality(coalesce(p_eids, '{}')) = 0 THEN
        RETURN;
    END IF;
    WHILE v_hop < p_hops AND cardinality(v_frontier) > 0 AND v_rows < p_max_edges LOOP
        v_hop := v_hop + 1;
        EXECUTE format(
            'SELECT array_agg((x.a)::text::bigint), array_agg((x.b)::text::bigint), array_agg((x.t)::text::bigint) '
            'FROM ag_catalog.cypher(%L, $c$ MATCH (a:Entity)-[r:REL]->(b:Entity) WHERE a.eid IN $eids '
            'RETURN a.eid, b.eid, r.tid UNION ALL MATCH (a:Entity)<-[r:REL]-(b:Entity) WHERE a.eid IN $eids '
            'RETURN a.eid, b.eid, r.tid $c$, $1) AS x(a ag_catalog.agtype, b ag_catalog.agtype, t ag_catalog.agtype)',
            v_graph)
            INTO v_a, v_b, v_t
            USING jsonb_build_object('eids', to_jsonb(v_frontier))::text::ag_catalog.agtype;
        FOR r IN
            SELECT DISTINCT ON (t.id) t.id, t.subject_id, t.object_id, t.predicate, t.evidence_block_id, t.confidence,
                   x.b AS other
            FROM unnest(v_a, v_b, v_t) AS x(a, b, tid)
            JOIN memvault.triple t ON t.vault_id = memvault.current_vault_id() AND t.id = x.tid
            WHERE NOT (t.id = ANY (v_tids))
              AND t.valid_at <= v_as_of AND (t.invalid_at IS NULL OR t.invalid_at > v_as_of)
            ORDER BY t.id
            LIMIT p_max_edges - v_rows
        LOOP
            hop := v_hop; subject_id := r.subject_id; object_id := r.object_id; triple_id := r.id;
            predicate := r.predicate; evidence_block_id := r.evidence_block_id; confidence := r.confidence;
            v_tids := v_tids || r.id;
            v_rows := v_rows + 1;
            RETURN NEXT;
        END LOOP;
        SELECT coalesce(array_agg(DISTINCT x.b), '{}') INTO v_frontier FROM unnest(v_b) AS x(b)
        WHERE x.b IS NOT NULL AND NOT (x.b = ANY (v_seen));
        v_seen := v_seen || v_frontier;
    END LOOP;
END
$$;

-- GLOBAL mode: the L1/L2 community summaries nearest to the query. The community tables come with the
-- background track; until they exist this returns nothing.
CREATE OR REPLACE FUNCTION memvault.community_summaries_v1(p_qvec vector, p_limit integer DEFAULT 5)
    RETURNS TABLE (id bigint, level integer, summary text, cosine double precision)
    LANGUAGE plpgsql STABLE
    SET search_path = memvault, public, pg_catalog
    AS $$
BEGIN
    IF to_regclass('memvault.community_summary') IS NULL THEN
        RETURN;
    END IF;
    RETURN QUERY EXECUTE
        'SELECT s.id::bigint, s.level::integer, s.summary::text, (1 - (s.embedding <=> $1))::double precision '
        'FROM memvault.community_summary s WHERE s.vault_id = memvault.current_vault_id() '
        'AND s.embedding IS NOT NULL ORDER BY s.embedding <=> $1 LIMIT $2'
        USING p_qvec, p_limit;
EXCEPTION WHEN undefined_column OR undefined_table THEN
    RETURN;  -- a different community schema: GLOBAL stays a no-op rather than failing the recall
END
$$;

