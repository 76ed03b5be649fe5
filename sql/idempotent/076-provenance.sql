-- ProvenanceExpansion (app/read/provenance.py): what the background built from memories leads back to them.
--
-- A session summary (kind 'summary', written at the session's close) or an L2 community summary (the dream's
-- reflect stage) restates many memories in few words, so it is near a question the memories it was made from
-- answer one at a time. Recall shows memories, and a summary is a pointer: its sources are found by the
-- provenance the tables keep (a summary block's session_id; a community's members, their triples and those
-- triples' evidence blocks), and the ones nearest the question come back for scoring.

-- For the best candidates p_ids: each session summary among them gives the p_per_source chunks of its session
-- nearest p_qvec (parent_id: the summary, via 'session'); and the p_communities community summaries (of the
-- communities at p_resolution) nearest p_qvec, at cosine p_min_cosine or more, give each the p_per_source
-- evidence blocks of their members' triples nearest p_qvec (parent_id NULL, via 'community', weight the
-- summary's cosine). Blocks valid at p_as_of, not retracted; a block once, at its heaviest reason.
CREATE OR REPLACE FUNCTION memvault.provenance_sources_v1(p_ids bigint[], p_qvec vector, p_as_of timestamptz,
                                                         p_per_source integer DEFAULT 3,
                                                         p_communities integer DEFAULT 3,
                                                         p_min_cosine double precision DEFAULT 0.3,
                                                         p_resolution double precision DEFAULT 1.0)
    RETURNS TABLE (id bigint, parent_id bigint, via text, weight double precision)
    LANGUAGE sql STABLE
    SET search_path = memvault, public, pg_catalog
    AS $$
    WITH summ AS MATERIALIZED (  -- the session summaries among the candidates
        SELECT b.id, b.session_id FROM memvault.block b
        WHERE b.vault_id = memvault.current_vault_id() AND b.id = ANY (p_ids) AND b.kind = 'summary'
          AND b.session_id IS NOT NULL
    ), from_sessions AS (
        SELECT c.id, s.id AS parent_id, 'session'::text AS via, 1.0::double precision AS weight
        FROM summ s
        CROSS JOIN LATERAL (
            SELECT b.id FROM memvault.block b
            WHERE b.vault_id = memvault.current_vault_id() AND b.session_id = s.session_id AND b.kind = 'chunk'
              AND b.embedding IS NOT NULL AND b.retracted_at IS NULL
              AND b.valid_at <= coalesce(p_as_of, now())
              AND (b.invalid_at IS NULL OR b.invalid_at > coalesce(p_as_of, now()))
            ORDER BY b.embedding <=> p_qvec, b.id
            LIMIT p_per_source
        ) c
    ), comm AS MATERIALIZED (  -- the community summaries nearest the question
        SELECT s.community_id, (1 - (s.embedding <=> p_qvec))::double precision AS cosine
        FROM memvault.community_summary s
        JOIN memvault.community c ON c.vault_id = s.vault_id AND c.id = s.community_id
        WHERE s.vault_id = memvault.current_vault_id() AND s.embedding IS NOT NULL AND p_communities > 0
          AND abs(c.resolution - p_resolution) < 1e-6
        ORDER BY s.embedding <=> p_qvec, s.community_id
        LIMIT p_communities
    ), from_communities AS (
        SELECT e.id, NULL::bigint AS parent_id, 'community'::text AS via, cm.cosine AS weight
        FROM comm cm
        CROSS JOIN LATERAL (
            SELECT b.id FROM memvault.block b
            WHERE b.vault_id = memvault.current_vault_id() AND b.embedding IS NOT NULL AND b.retracted_at IS NULL
              AND b.valid_at <= coalesce(p_as_of, now())
              AND (b.invalid_at IS NULL OR b.invalid_at > coalesce(p_as_of, now()))
              AND b.id IN (SELECT t.evidence_block_id FROM memvault.triple t  -- as community_texts_v1 reads them
                           JOIN memvault.community_member m ON m.vault_id = t.vault_id
                                AND m.community_id = cm.community_id
                                AND (m.entity_id = t.subject_id OR m.entity_id = t.object_id)
                           WHERE t.vault_id = memvault.current_vault_id() AND t.invalid_at IS NULL
                             AND t.evidence_block_id IS NOT NULL)
            ORDER BY b.embedding <=> p_qvec, b.id
            LIMIT p_per_source
        ) e
        WHERE cm.cosine >= p_min_cosine
    )
    SELECT DISTINCT ON (x.id) x.id, x.parent_id, x.via, x.weight
    FROM (SELECT * FROM from_sessions UNION ALL SELECT * FROM from_communities) x
    ORDER BY x.id, x.weight DESC, x.via
$$;
