-- HopExpansion (app/read/hops.py): the second hop of a question whose answer is spread over several places.
-- From the best candidates of the first hop, the memories that are near them rather than near the question: by
-- meaning (each seed's nearest blocks), by what they name (blocks that state something about an entity the
-- seeds' triples name, rarer entities counting more), and by community (the L1 communities of those entities,
-- when the dream loop has computed them). Python scores them with the same 11 stages and ranks them with the
-- first hop's candidates. Applied at head.

-- Each of p_ids' (best first) p_dense_n nearest visible blocks by embedding, the p_ids themselves left out;
-- each block once, under the seed it is nearest to. A vault with its own HNSW index is searched through it, one
-- index scan per seed (the vault is a literal: the planner matches a vault's partial index only against a
-- constant); a smaller one in one pass over its blocks, every seed's distance computed in it (ten scans of a
-- 1,900-block vault, one per seed, took 70 ms here, the one pass 19 ms).
CREATE OR REPLACE FUNCTION memvault.hop_dense_v1(p_ids bigint[], p_dense_n integer DEFAULT 10,
                                                 p_as_of timestamptz DEFAULT NULL)
    RETURNS TABLE (id bigint, parent_id bigint, weight double precision)
    LANGUAGE plpgsql STABLE
    SET search_path = memvault, public, pg_catalog
    AS $$
#variable_conflict use_column
DECLARE
    v_vault uuid := memvault.current_vault_id();
    v_as_of timestamptz := coalesce(p_as_of, now());
BEGIN
    IF v_vault IS NULL OR coalesce(p_dense_n, 0) <= 0 OR cardinality(coalesce(p_ids, '{}')) = 0 THEN
        RETURN;
    END IF;
    IF NOT memvault.has_ann_index_v1(v_vault) THEN
        RETURN QUERY
        WITH s AS MATERIALIZED (
            SELECT b.id, b.embedding, p.ord FROM unnest(p_ids) WITH ORDINALITY AS p(id, ord)
            JOIN memvault.block b ON b.vault_id = v_vault AND b.id = p.id AND b.embedding IS NOT NULL
        ), d AS (
            SELECT b.id, s.id AS parent_id, s.ord, b.embedding <=> s.embedding AS dist,
                   row_number() OVER (PARTITION BY s.id ORDER BY b.embedding <=> s.embedding, b.id) AS rn
            FROM memvault.block b CROSS JOIN s
            WHERE b.vault_id = v_vault AND b.id <> ALL (p_ids) AND b.embedding IS NOT NULL
              AND b.retracted_at IS NULL AND b.valid_at <= v_as_of AND (b.invalid_at IS NULL OR b.invalid_at > v_as_of)
        )
        SELECT DISTINCT ON (d.id) d.id, d.parent_id, 1 - d.dist
        FROM d WHERE d.rn <= p_dense_n
        ORDER BY d.id, d.dist, d.ord;
        RETURN;
    END IF;
    PERFORM set_config('hnsw.ef_search', greatest(p_dense_n * 2, 40)::text, true);
    RETURN QUERY EXECUTE format($q$
        SELECT DISTINCT ON (n.id) n.id, s.id, 1 - n.dist
        FROM unnest($1) WITH ORDINALITY AS p(id, ord)
        JOIN memvault.block s ON s.vault_id = %1$L::uuid AND s.id = p.id AND s.embedding IS NOT NULL
        CROSS JOIN LATERAL (
            SELECT b.id, b.embedding <=> s.embedding AS dist FROM memvault.block b
            WHERE b.vault_id = %1$L::uuid AND b.id <> ALL ($1) AND b.embedding IS NOT NULL
              AND b.retracted_at IS NULL AND b.valid_at <= $3 AND (b.invalid_at IS NULL OR b.invalid_at > $3)
            ORDER BY b.embedding <=> s.embedding
            LIMIT $2
        ) n
        ORDER BY n.id, n.dist, p.ord $q$, v_vault)
        USING p_ids, p_dense_n, v_as_of;
END
$$;

-- The blocks that are evidence of a triple naming an entity that a triple of p_ids names (p_ids themselves
-- left out), at most p_limit, best first. An entity weighs its inverse document frequency, ln(N / df) with df
-- the blocks it is evidence of and N the vault's evidence blocks: the people a conversation is between are in
-- every other triple and say nothing about which of their turns belong together; an entity named in more than
-- p_max_share of the evidence blocks is left out altogether. weight: the sum over the shared entities, divided by
-- the best block's; parent_id: the best-placed seed that names one of them. With p_communities, the members
-- of those entities' L1 communities (at p_resolution) count as shared too, at half weight.
CREATE OR REPLACE FUNCTION memvault.hop_entities_v1(p_ids bigint[], p_limit integer DEFAULT 50,
                                                    p_max_share double precision DEFAULT 0.1,
                                                    p_as_of timestamptz DEFAULT NULL,
                                                    p_communities boolean DEFAULT false,
                                                    p_resolution double precision DEFAULT 1.0)
    RETURNS TABLE (id bigint, parent_id bigint, weight double precision, via text)
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    WITH live AS MATERIALIZED (  -- the triples valid at p_as_of
        SELECT t.subject_id, t.object_id, t.evidence_block_id FROM memvault.triple t
        WHERE t.vault_id = memvault.current_vault_id() AND t.evidence_block_id IS NOT NULL
          AND t.valid_at <= coalesce(p_as_of, now()) AND (t.invalid_at IS NULL OR t.invalid_at > coalesce(p_as_of, now()))
    ), ends AS MATERIALIZED (  -- (entity, block) once per pair
        SELECT DISTINCT x.eid, l.evidence_block_id AS block_id
        FROM live l CROSS JOIN LATERAL (VALUES (l.subject_id), (l.object_id)) AS x(eid)
    ), n AS (SELECT count(DISTINCT e.block_id)::double precision AS n FROM ends e
    ), df AS MATERIALIZED (
        SELECT e.eid, count(*)::double precision AS df FROM ends e GROUP BY e.eid
    ), seed AS MATERIALIZED (  -- the entities the seeds name, each under its best-placed seed
        SELECT DISTINCT ON (e.eid) e.eid, p.id AS parent_id, ln(n.n / df.df) AS idf, 'entity'::text AS via
        FROM unnest(p_ids) WITH ORDINALITY AS p(id, ord)
        JOIN ends e ON e.block_id = p.id
        JOIN df ON df.eid = e.eid
        CROSS JOIN n
        WHERE df.df <= greatest(p_max_share * n.n, 1)
        ORDER BY e.eid, p.ord
    ), shared AS (  -- the seeds' entities, and with p_communities the other members of their communities
        SELECT s.eid, s.parent_id, s.idf, s.via FROM seed s
        UNION ALL
        (SELECT DISTINCT ON (m2.entity_id) m2.entity_id, s.parent_id, ln(n.n / df.df) / 2, 'community'
        FROM seed s
        JOIN memvault.community_member m ON m.vault_id = memvault.current_vault_id() AND m.entity_id = s.eid
        JOIN memvault.community c ON c.vault_id = m.vault_id AND c.id = m.community_id
                                 AND abs(c.resolution - p_resolution) < 1e-6
        JOIN memvault.community_member m2 ON m2.vault_id = m.vault_id AND m2.community_id = m.community_id
                                         AND m2.entity_id <> ALL (ARRAY(SELECT s2.eid FROM seed s2))
        JOIN df ON df.eid = m2.entity_id
        CROSS JOIN n
        WHERE p_communities AND df.df <= greatest(p_max_share * n.n, 1)
        ORDER BY m2.entity_id, s.idf DESC)
    ), hit AS (
        SELECT e.block_id, sum(sh.idf) AS w, (array_agg(sh.parent_id ORDER BY sh.idf DESC))[1] AS parent_id,
               (array_agg(sh.via ORDER BY sh.idf DESC))[1] AS via
        FROM shared sh JOIN ends e ON e.eid = sh.eid
        WHERE e.block_id <> ALL (p_ids)
        GROUP BY e.block_id
    )
    SELECT h.block_id, h.parent_id, h.w / nullif(max(h.w) OVER (), 0), h.via
    FROM hit h
    WHERE h.w > 0
    ORDER BY h.w DESC, h.block_id
    LIMIT p_limit
$$;
