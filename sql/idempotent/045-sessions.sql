-- Sessions in segments (issue 21, migration 0015). Applied at head, after
-- every table exists (app/db/migrate.py). A session never refuses its own continuation: turns sent to
-- a closed session reopen it, and the next close extracts only the turns after the previous close. Why a
-- segment of the same session rather than a new session or a full re-close: the session keeps one id and one
-- turn sequence (SessionContinuity reads neighbours across the pause; a Claude Code session stays one memvault
-- session), and what earlier closes extracted (units, summary blocks) stays valid as it was, not re-extracted.

-- Archive turns at the end of a session, creating it, or reopening it when it was closed.
CREATE OR REPLACE FUNCTION memvault.append_turns_v2(p_vault uuid, p_session text, p_turns jsonb)
    RETURNS TABLE (item integer, turn_id bigint, seq integer, reopened boolean)
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, public, pg_catalog
    AS $$
DECLARE
    v_first  timestamptz;
    v_last   timestamptz;
    v_base   integer;
    v_closed timestamptz;
BEGIN
    SELECT min((t->>'said_at')::timestamptz), max((t->>'said_at')::timestamptz) INTO v_first, v_last
      FROM jsonb_array_elements(p_turns) AS t;
    -- The row lock taken here orders this append after a close in progress, and a close after it.
    INSERT INTO memvault.session AS s (vault_id, id, started_at, last_turn_at)
    VALUES (p_vault, p_session, v_first, v_last)
    ON CONFLICT (vault_id, id) DO UPDATE
        SET started_at = least(s.started_at, excluded.started_at),
            last_turn_at = greatest(s.last_turn_at, excluded.last_turn_at)
    RETURNING s.turn_count, s.closed_at INTO v_base, v_closed;
    UPDATE memvault.session SET turn_count = turn_count + jsonb_array_length(p_turns), closed_at = NULL
     WHERE vault_id = p_vault AND id = p_session;
    RETURN QUERY
    WITH src AS (
        SELECT x.ord::integer AS ord, x.t FROM jsonb_array_elements(p_turns) WITH ORDINALITY AS x(t, ord)
    ), ins AS (
        INSERT INTO memvault.turn (vault_id, session_id, seq, role, content, said_at, metadata)
        SELECT p_vault, p_session, v_base + ord, t->>'role', t->>'content', (t->>'said_at')::timestamptz,
               coalesce(t->'metadata', '{}'::jsonb)
          FROM src ORDER BY ord
        RETURNING id, turn.seq
    )
    SELECT (i.seq - v_base)::integer, i.id, i.seq, v_closed IS NOT NULL FROM ins i ORDER BY i.seq;
END
$$;

-- The turns of a session's open segment: those after what earlier closes extracted, in order.
CREATE OR REPLACE FUNCTION memvault.session_segment_turns_v1(p_vault uuid, p_session text)
    RETURNS TABLE (id bigint, seq integer, role text, content text, said_at timestamptz)
    LANGUAGE plpgsql STABLE
    SET search_path = memvault, public, pg_catalog
    AS $$
BEGIN
    RETURN QUERY
    SELECT t.id, t.seq, t.role, t.content, t.said_at
      FROM memvault.turn t JOIN memvault.session s ON s.vault_id = t.vault_id AND s.id = t.session_id
     WHERE t.vault_id = p_vault AND t.session_id = p_session AND t.seq > s.closed_through
     ORDER BY t.seq;
END
$$;

-- Close a session's segment, turns closed_through+1 .. p_through: its summary is added to the session's (the
-- earlier segments' stay), its thread map's threads join the earlier ones. The session is closed unless turns
-- arrived after p_through while the close ran (they wait for the next close). No row: that segment was
-- closed already (a concurrent close won).
CREATE OR REPLACE FUNCTION memvault.close_session_v2(p_vault uuid, p_session text, p_summary text,
                                                     p_thread_map jsonb, p_through integer)
    RETURNS TABLE (closed_at timestamptz, segment integer)
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, public, pg_catalog
    AS $$
BEGIN
    RETURN QUERY
        UPDATE memvault.session s
           SET closed_at = CASE WHEN s.turn_count <= p_through THEN clock_timestamp() END,
               summary = CASE WHEN coalesce(p_summary, '') = '' THEN s.summary
                              WHEN coalesce(s.summary, '') = '' THEN p_summary
                              ELSE s.summary || E'\n\n' || p_summary END,
               thread_map = CASE WHEN s.thread_map IS NULL THEN p_thread_map
                                 ELSE jsonb_set(p_thread_map, '{threads}',
                                                coalesce(s.thread_map->'threads', '[]'::jsonb)
                                                || coalesce(p_thread_map->'threads', '[]'::jsonb)) END,
               closed_through = p_through,
               segments = s.segments + 1
         WHERE s.vault_id = p_vault AND s.id = p_session AND s.closed_through < p_through
        RETURNING s.closed_at, s.segments;
END
$$;
