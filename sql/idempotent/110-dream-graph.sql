-- The graph side of the dream (seed 004; app/background/communities.py): entity types from the canonical
-- predicates, multi-signal edge weights, Leiden communities (computed in Python, stored here), their summaries, and
-- what GLOBAL cascade recall reads of them. Re-applied by every migration: bodies are checked when called.

-- Each entity of the current vault typed by the roles it plays in valid triples (a predicate's domain for its
-- subject, its range for its object; the most frequent specific type, 'thing' when none).
CREATE OR REPLACE FUNCTION memvault.entity_types_v1()
    RETURNS TABLE (entity_id bigint, type text)
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    WITH roles AS (
        SELECT t.subject_id AS e, cp.domain AS ty FROM memvault.triple t
        JOIN memvault.canonical_predicate cp ON cp.predicate = t.predicate
        WHERE t.vault_id = memvault.current_vault_id() AND t.invalid_at IS NULL
        UNION ALL
        SELECT t.object_id, cp.range FROM memvault.triple t
        JOIN memvault.canonical_predicate cp ON cp.predicate = t.predicate
        WHERE t.vault_id = memvault.current_vault_id() AND t.invalid_at IS NULL
    ), ranked AS (
        SELECT r.e, r.ty, row_number() OVER (PARTITION BY r.e ORDER BY (r.ty IN ('thing', 'value')), count(*) DESC, r.ty) AS rn
        FROM roles r GROUP BY r.e, r.ty
    )
    SELECT e.id, coalesce(r.ty, 'thing') FROM memvault.entity e
    LEFT JOIN ranked r ON r.e = e.id AND r.rn = 1
    WHERE e.vault_id = memvault.current_vault_id()
$$;

-- Multi-signal edges (seed 004): for every pair of entities linked by a triple, or sharing a memory or a neighbour,
--   w = p_w_co * co_occ_log + p_w_session * session_jaccard + p_w_aa * adamic_adar_norm
--       + p_w_type * type_affinity + p_w_sem * semantic_cosine
-- co_occ_log: log(1 + memories both are in) / log(1 + the vault's most); session_jaccard: sessions in common over
-- sessions of either; adamic_adar_norm: sum of 1 / ln(degree) over common neighbours (neighbours of degree above
-- p_max_hub_degree skipped), over the vault's highest; type_affinity: memvault.type_affinity of the two types
-- (p_default_affinity when not listed); semantic_cosine: of the names' embeddings, at least 0. kept: w >=
-- p_threshold. Replaces the vault's edge_weight rows. Returns (pairs, kept).
CREATE OR REPLACE FUNCTION memvault.compute_edge_weights_v1(p_w_co double precision DEFAULT 0.25,
                                                            p_w_session double precision DEFAULT 0.20,
                                                            p_w_aa double precision DEFAULT 0.20,
                                                            p_w_type double precision DEFAULT 0.15,
                                                            p_w_sem double precision DEFAULT 0.20,
                                                            p_threshold double precision DEFAULT 0.45,
                                                            p_default_affinity double precision DEFAULT 0.4,
                                                            p_max_hub_degree integer DEFAULT 200)
    RETURNS TABLE (pairs integer, kept integer)
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, public, pg_catalog
    AS $$
DECLARE
    v_vault uuid := memvault.current_vault_id();
BEGIN
    DELETE FROM memvault.edge_weight w WHERE w.vault_id = v_vault;
    INSERT INTO memvault.edge_weight AS w (vault_id, a_id, b_id, co_occurrence, co_occ_log, session_jaccard,
                                           adamic_adar_norm, type_affinity, semantic_cosine, weight, kept)
    WITH tr AS (
        SELECT t.subject_id AS s, t.object_id AS o, t.evidence_block_id AS b FROM memvault.triple t
        WHERE t.vault_id = v_vault AND t.invalid_at IS NULL AND t.subject_id <> t.object_id
    ), eb AS (
        SELECT DISTINCT x.e, tr.b FROM tr CROSS JOIN LATERAL (VALUES (tr.s), (tr.o)) AS x(e) WHERE tr.b IS NOT NULL
    ), es AS (
        SELECT DISTINCT eb.e, bl.session_id FROM eb
        JOIN memvault.block bl ON bl.vault_id = v_vault AND bl.id = eb.b
        WHERE bl.session_id IS NOT NULL
    ), ns AS (
        SELECT es.e, count(*) AS n FROM es GROUP BY es.e
    ), adj AS (
        SELECT tr.s AS a, tr.o AS b FROM tr UNION SELECT tr.o, tr.s FROM tr
    ), deg AS (
        SELECT adj.a, count(*) AS d FROM adj GROUP BY adj.a
    ), co AS (
        SELECT x.e AS a, y.e AS b, count(*) AS n FROM eb x JOIN eb y ON y.b = x.b AND x.e < y.e GROUP BY 1, 2
    ), aa AS (
        SELECT x.a, y.a AS b, sum(1.0 / ln(d.d)) AS s
        FROM adj x JOIN adj y ON y.b = x.b AND x.a < y.a
        JOIN deg d ON d.a = x.b
        WHERE d.d > 1 AND d.d <= p_max_hub_degree
        GROUP BY 1, 2
    ), cand AS (
        SELECT c.a, c.b FROM co c UNION SELECT a.a, a.b FROM aa a
        UNION SELECT least(tr.s, tr.o), greatest(tr.s, tr.o) FROM tr
    ), sj AS (
        SELECT c.a, c.b, count(*) AS n FROM cand c
        JOIN es x ON x.e = c.a JOIN es y ON y.e = c.b AND y.session_id = x.session_id
        GROUP BY 1, 2
    ), types AS (
        SELECT * FROM memvault.entity_types_v1()
    ), sig AS (
        SELECT c.a, c.b, coalesce(co.n, 0)::integer AS co_n,
               coalesce(ln(1 + co.n) / nullif(ln(1 + max(co.n) OVER ()), 0), 0) AS co_log,
               coalesce(sj.n::double precision / nullif(na.n + nb.n - sj.n, 0), 0) AS jac,
               coalesce(aa.s / nullif(max(aa.s) OVER (), 0), 0) AS aa_norm,
               coalesce(ta.affinity, p_default_affinity) AS aff,
               greatest(coalesce(1 - (ea.embedding <=> eb2.embedding), 0), 0) AS cos
        FROM cand c
        LEFT JOIN co ON co.a = c.a AND co.b = c.b
        LEFT JOIN aa ON aa.a = c.a AND aa.b = c.b
        LEFT JOIN sj ON sj.a = c.a AND sj.b = c.b
        LEFT JOIN ns na ON na.e = c.a
        LEFT JOIN ns nb ON nb.e = c.b
        JOIN types tya ON tya.entity_id = c.a
        JOIN types tyb ON tyb.entity_id = c.b
        LEFT JOIN memvault.type_affinity ta ON ta.type_a = least(tya.type, tyb.type)
                                           AND ta.type_b = greatest(tya.type, tyb.type)
        JOIN memvault.entity ea ON ea.vault_id = v_vault AND ea.id = c.a
        JOIN memvault.entity eb2 ON eb2.vault_id = v_vault AND eb2.id = c.b
    )
    SELECT v_vault, s.a, s.b, s.co_n, s.co_log, s.jac, s.aa_norm, s.aff, s.cos,
           p_w_co * s.co_log + p_w_session * s.jac + p_w_aa * s.aa_norm + p_w_type * s.aff + p_w_sem * s.cos,
           p_w_co * s.co_log + p_w_session * s.jac + p_w_aa * s.aa_norm + p_w_type * s.aff + p_w_sem * s.cos
               >= p_threshold
    FROM sig s;
    RETURN QUERY SELECT count(*)::integer, (count(*) FILTER (WHERE w.kept))::integer
                 FROM memvault.edge_weight w WHERE w.vault_id = v_vault;
END
$$;

-- The kept edges of the current vault: what Leiden reads.
CREATE OR REPLACE FUNCTION memvault.community_edges_v1()
    RETURNS TABLE (a_id bigint, b_id bigint, weight real)
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    SELECT w.a_id, w.b_id, w.weight FROM memvault.edge_weight w
    WHERE w.vault_id = memvault.current_vault_id() AND w.kept
    ORDER BY w.a_id, w.b_id
$$;

-- Replace the current vault's communities with a new partition set: p_communities is
-- [{"resolution": 1.0, "members": [entity ids]}, ...]; each is labelled by its three members of highest degree.
-- Returns the new ids in the order given.
CREATE OR REPLACE FUNCTION memvault.replace_communities_v1(p_run bigint, p_communities jsonb)
    RETURNS TABLE (ord integer, community_id bigint)
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, pg_catalog
    AS $$
DECLARE
    v_vault uuid := memvault.current_vault_id();
    c       record;
    v_id    bigint;
BEGIN
    DELETE FROM memvault.community x WHERE x.vault_id = v_vault;
    FOR c IN SELECT x.ord::integer AS ord, x.c FROM jsonb_array_elements(p_communities) WITH ORDINALITY AS x(c, ord)
    LOOP
        INSERT INTO memvault.community (vault_id, run_id, resolution, size, label)
        SELECT v_vault, p_run, (c.c->>'resolution')::real, jsonb_array_length(c.c->'members'),
               coalesce((SELECT string_agg(n.name, ', ' ORDER BY n.d DESC, n.name) FROM (
                   SELECT e.name, (SELECT count(*) FROM memvault.triple t WHERE t.vault_id = v_vault
                                     AND t.invalid_at IS NULL AND (t.subject_id = e.id OR t.object_id = e.id)) AS d
                   FROM memvault.entity e
                   WHERE e.vault_id = v_vault
                     AND e.id IN (SELECT (m)::bigint FROM jsonb_array_elements_text(c.c->'members') AS m)
                   ORDER BY 2 DESC, e.name LIMIT 3) n), '')
        RETURNING id INTO v_id;
        INSERT INTO memvault.community_member (vault_id, community_id, entity_id)
        SELECT v_vault, v_id, (m)::bigint FROM jsonb_array_elements_text(c.c->'members') AS m
        ON CONFLICT DO NOTHING;
        ord := c.ord; community_id := v_id;
        RETURN NEXT;
    END LOOP;
END
$$;

-- What a community's summary is written from: the valid memories its members are evidence of, most central first.
CREATE OR REPLACE FUNCTION memvault.community_texts_v1(p_community bigint, p_limit integer DEFAULT 30)
    RETURNS TABLE (block_id bigint, content text)
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    SELECT b.id, b.content FROM memvault.block b
    WHERE b.vault_id = memvault.current_vault_id() AND b.invalid_at IS NULL AND b.retracted_at IS NULL
      AND b.id IN (SELECT t.evidence_block_id FROM memvault.triple t
                   JOIN memvault.community_member m ON m.vault_id = t.vault_id AND m.community_id = p_community
                                                   AND (m.entity_id = t.subject_id OR m.entity_id = t.object_id)
                   WHERE t.vault_id = memvault.current_vault_id() AND t.invalid_at IS NULL)
    ORDER BY b.ppr_score DESC, b.id
    LIMIT p_limit
$$;

CREATE OR REPLACE FUNCTION memvault.set_community_summary_v1(p_community bigint, p_summary text, p_key_points text[],
                                                             p_embedding vector)
    RETURNS bigint
    LANGUAGE sql VOLATILE
    SET search_path = memvault, public, pg_catalog
    AS $$
    INSERT INTO memvault.community_summary AS s (vault_id, community_id, summary, key_points, embedding)
    VALUES (memvault.current_vault_id(), p_community, p_summary, p_key_points, p_embedding)
    ON CONFLICT (vault_id, community_id) DO UPDATE
        SET summary = excluded.summary, key_points = excluded.key_points, embedding = excluded.embedding,
            created_at = now()
    RETURNING s.id
$$;

-- GLOBAL recall: the memories the members of the communities of p_entity_ids (at resolution p_resolution) are
-- evidence of, each weighted by how many of its triples lie inside such a community, at most p_limit.
CREATE OR REPLACE FUNCTION memvault.community_evidence_v1(p_entity_ids bigint[], p_resolution double precision DEFAULT 1.0,
                                                          p_limit integer DEFAULT 200)
    RETURNS TABLE (block_id bigint, weight double precision, community_id bigint)
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    WITH comm AS (
        SELECT DISTINCT m.community_id FROM memvault.community_member m
        JOIN memvault.community c ON c.vault_id = m.vault_id AND c.id = m.community_id
        WHERE m.vault_id = memvault.current_vault_id() AND m.entity_id = ANY (p_entity_ids)
          AND abs(c.resolution - p_resolution) < 1e-6
    ), members AS (
        SELECT m.entity_id, m.community_id FROM memvault.community_member m
        WHERE m.vault_id = memvault.current_vault_id() AND m.community_id IN (SELECT comm.community_id FROM comm)
    )
    SELECT t.evidence_block_id, count(*)::double precision, min(ms.community_id)
    FROM memvault.triple t
    JOIN members ms ON ms.entity_id = t.subject_id
    JOIN members mo ON mo.entity_id = t.object_id AND mo.community_id = ms.community_id
    WHERE t.vault_id = memvault.current_vault_id() AND t.invalid_at IS NULL AND t.evidence_block_id IS NOT NULL
    GROUP BY t.evidence_block_id
    ORDER BY 2 DESC, 1
    LIMIT p_limit
$$;

-- The current vault's communities at one resolution (all when NULL), largest first, with their summaries.
CREATE OR REPLACE FUNCTION memvault.communities_v1(p_resolution double precision DEFAULT NULL, p_limit integer DEFAULT 100)
    RETURNS TABLE (id bigint, resolution real, size integer, label text, members text[], summary text)
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    SELECT c.id, c.resolution, c.size, c.label,
           (SELECT array_agg(e.name ORDER BY e.name) FROM memvault.community_member m
            JOIN memvault.entity e ON e.vault_id = m.vault_id AND e.id = m.entity_id
            WHERE m.vault_id = c.vault_id AND m.community_id = c.id),
           s.summary
    FROM memvault.community c
    LEFT JOIN memvault.community_summary s ON s.vault_id = c.vault_id AND s.community_id = c.id
    WHERE c.vault_id = memvault.current_vault_id()
      AND (p_resolution IS NULL OR abs(c.resolution - p_resolution) < 1e-6)
    ORDER BY c.resolution, c.size DESC, c.id
    LIMIT p_limit
$$;

