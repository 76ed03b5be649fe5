-- Graph centrality for PPRBoost (scoring stage 7 reads block.ppr_score). The background job graph_centrality
-- (app/background/centrality.py) reads a vault's valid triples, computes PageRank over its entities in Python,
-- and hands the scores back to apply_centrality_v1, which scores the blocks that are the triples' evidence.
-- Applied at head (app/db/migrate.py).

-- Vaults whose graph changed since their blocks were last scored: another count of valid triples or another
-- newest triple, or a vault scored before whose triples are all gone (its scores must go back to 0).
CREATE OR REPLACE FUNCTION memvault.centrality_due_v1()
    RETURNS TABLE (vault_id uuid, triples bigint, max_triple bigint)
    LANGUAGE plpgsql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
BEGIN
    RETURN QUERY
    WITH g AS (
        SELECT t.vault_id, count(*) FILTER (WHERE t.invalid_at IS NULL) AS triples, max(t.id) AS max_triple
        FROM memvault.triple t GROUP BY t.vault_id
    )
    SELECT g.vault_id, g.triples, g.max_triple
    FROM g LEFT JOIN memvault.graph_centrality_state s ON s.vault_id = g.vault_id
    WHERE s.vault_id IS NULL OR s.triples <> g.triples OR s.max_triple <> g.max_triple
    UNION ALL
    SELECT s.vault_id, 0::bigint, s.max_triple
    FROM memvault.graph_centrality_state s
    WHERE s.triples > 0 AND NOT EXISTS (SELECT 1 FROM memvault.triple t WHERE t.vault_id = s.vault_id);
END
$$;
REVOKE ALL ON FUNCTION memvault.centrality_due_v1() FROM PUBLIC;

-- The current vault's graph as weighted edges: each valid triple, subject to object, at its confidence.
CREATE OR REPLACE FUNCTION memvault.centrality_edges_v1()
    RETURNS TABLE (subject_id bigint, object_id bigint, weight real)
    LANGUAGE plpgsql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
BEGIN
    RETURN QUERY
    SELECT t.subject_id, t.object_id, t.confidence
    FROM memvault.triple t
    WHERE t.vault_id = memvault.current_vault_id() AND t.invalid_at IS NULL;
END
$$;

-- Score the current vault's blocks from their entities' centrality (p_scores in [0, 1], the most central entity
-- 1). A triple counts as central when both its ends are: the geometric mean of its subject's and object's
-- scores, so a hub every memory mentions (the user) does not lift every memory it touches. A block takes its
-- best triple's score, divided by the vault's best block's, so the most central evidence gets the full boost.
-- Blocks no longer evidence of any valid triple go back to 0. Only changed rows are written (a block row is
-- wide). Records the graph it scored (p_triples, p_max_triple). Returns the number of blocks changed.
CREATE OR REPLACE FUNCTION memvault.apply_centrality_v1(p_entity_ids bigint[], p_scores real[], p_triples bigint,
                                                        p_max_triple bigint)
    RETURNS integer
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, pg_catalog
    AS $$
DECLARE
    v_vault   uuid := memvault.current_vault_id();
    v_changed integer;
    v_scored  integer;
BEGIN
    IF v_vault IS NULL THEN
        RAISE EXCEPTION 'apply_centrality_v1 needs a vault in scope' USING ERRCODE = 'MV422';
    END IF;
    PERFORM pg_advisory_xact_lock(hashtext('memvault.centrality'), hashtext(v_vault::text));
    WITH s AS (
        SELECT u.entity_id, greatest(least(u.score, 1), 0) AS score
        FROM unnest(p_entity_ids, p_scores) AS u(entity_id, score)
    ), per_block AS (
        SELECT t.evidence_block_id AS block_id,
               max(sqrt(coalesce(ss.score, 0) * coalesce(so.score, 0))) AS score
        FROM memvault.triple t
        LEFT JOIN s ss ON ss.entity_id = t.subject_id
        LEFT JOIN s so ON so.entity_id = t.object_id
        WHERE t.vault_id = v_vault AND t.invalid_at IS NULL AND t.evidence_block_id IS NOT NULL
        GROUP BY t.evidence_block_id
    ), scored AS (
        SELECT p.block_id, coalesce(p.score / nullif(max(p.score) OVER (), 0), 0)::real AS score FROM per_block p
    ), fresh AS (
        SELECT b.id, coalesce(c.score, 0)::real AS score
        FROM memvault.block b LEFT JOIN scored c ON c.block_id = b.id
        WHERE b.vault_id = v_vault AND (c.block_id IS NOT NULL OR b.ppr_score <> 0)
    ), changed AS (
        UPDATE memvault.block b SET ppr_score = f.score
        FROM fresh f
        WHERE b.vault_id = v_vault AND b.id = f.id AND b.ppr_score IS DISTINCT FROM f.score
        RETURNING b.id
    )
    SELECT (SELECT count(*) FROM changed)::integer, (SELECT count(*) FROM scored c WHERE c.score > 0)::integer
    INTO v_changed, v_scored;

    INSERT INTO memvault.graph_centrality_state AS st (vault_id, triples, max_triple, entities, blocks, computed_at)
    VALUES (v_vault, p_triples, p_max_triple, coalesce(cardinality(p_entity_ids), 0), v_scored, now())
    ON CONFLICT (vault_id) DO UPDATE
        SET triples = excluded.triples, max_triple = excluded.max_triple, entities = excluded.entities,
            blocks = excluded.blocks, computed_at = excluded.computed_at;
    RETURN v_changed;
END
$$;
