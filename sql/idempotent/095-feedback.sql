-- Feedback on a memory (POST .../memories/{id}/feedback, the MCP tool feedback): +1 / -1 added to the block's
-- counts in memvault.block_usage, which scoring stage 4 (FeedbackBoost) and the background track's pruning read,
-- and an audit row, in the caller's transaction. Applied at head.
CREATE OR REPLACE FUNCTION memvault.block_feedback_v1(p_vault uuid, p_block_id bigint, p_signal integer,
                                                      p_actor text DEFAULT 'api', p_note text DEFAULT NULL)
    RETURNS TABLE (block_id bigint, feedback_up integer, feedback_down integer)
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, pg_catalog
    AS $$
#variable_conflict use_column
BEGIN
    IF p_signal NOT IN (1, -1) THEN
        RAISE EXCEPTION 'feedback must be +1 (helpful) or -1 (not helpful), got %', p_signal
            USING ERRCODE = 'MV422', HINT = 'send {"signal": "+"} or {"signal": "-"}';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM memvault.block b WHERE b.vault_id = p_vault AND b.id = p_block_id) THEN
        RAISE EXCEPTION 'no memory % in this vault', p_block_id
            USING ERRCODE = 'MV404', HINT = 'list the vault''s memories: GET /v1/vaults/{vault}/memories';
    END IF;
    RETURN QUERY
    INSERT INTO memvault.block_usage AS u (vault_id, block_id, feedback_up, feedback_down)
    VALUES (p_vault, p_block_id, (p_signal = 1)::integer, (p_signal = -1)::integer)
    ON CONFLICT (vault_id, block_id) DO UPDATE
        SET feedback_up = u.feedback_up + excluded.feedback_up,
            feedback_down = u.feedback_down + excluded.feedback_down
    RETURNING u.block_id, u.feedback_up, u.feedback_down;
    INSERT INTO memvault.audit_log (vault_id, actor, action, block_id, detail)
    VALUES (p_vault, memvault.audit_actor(p_actor), 'memory.feedback', p_block_id,
            jsonb_strip_nulls(jsonb_build_object('signal', p_signal, 'note', p_note)));
END
$$;
