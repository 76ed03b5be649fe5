-- The inspector page's reads (app/interfaces/inspector.py), for the vault the connection is set to
-- (memvault.current_vault_id(), as every vault-scoped read). Read-only; nothing here writes. Applied at head
-- (app/db/migrate.py).

-- One vault at a glance: current memories and what left them, sessions, turns, graph size, last write.
CREATE OR REPLACE FUNCTION memvault.vault_overview_v1()
    RETURNS TABLE (memories bigint, superseded bigint, retracted bigint, sessions bigint, open_sessions bigint,
                   turns bigint, entities bigint, triples bigint, last_write_at timestamptz)
    LANGUAGE plpgsql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
BEGIN
    RETURN QUERY
    WITH b AS (
        SELECT count(*) FILTER (WHERE superseded_by IS NULL AND retracted_at IS NULL) AS memories,
               count(*) FILTER (WHERE superseded_by IS NOT NULL) AS superseded,
               count(*) FILTER (WHERE retracted_at IS NOT NULL) AS retracted,
               max(recorded_at) AS last_write_at
        FROM memvault.block WHERE vault_id = memvault.current_vault_id()
    ), s AS (
        SELECT count(*) AS sessions, count(*) FILTER (WHERE closed_at IS NULL) AS open_sessions
        FROM memvault.session WHERE vault_id = memvault.current_vault_id()
    )
    SELECT b.memories, b.superseded, b.retracted, s.sessions, s.open_sessions,
           (SELECT count(*) FROM memvault.turn WHERE vault_id = memvault.current_vault_id()),
           (SELECT count(*) FROM memvault.entity WHERE vault_id = memvault.current_vault_id()),
           (SELECT count(*) FROM memvault.triple WHERE vault_id = memvault.current_vault_id()),
           b.last_write_at
    FROM b, s;
END
$$;

-- The newest current memories by when they were said (valid time: an import of old conversations records today
-- what was said long ago, so write order is not it); ties by write order. block_valid_idx (vault_id, valid_at)
-- serves it.
CREATE OR REPLACE FUNCTION memvault.recent_blocks_v1(p_limit integer DEFAULT 50)
    RETURNS TABLE (id bigint, kind text, category text, content text, source_kind text, tier text,
                   session_id text, valid_at timestamptz, recorded_at timestamptz, version integer,
                   access_count integer)
    LANGUAGE plpgsql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
BEGIN
    RETURN QUERY
    SELECT b.id, b.kind, b.category, b.content, b.source_kind, b.tier, b.session_id, b.valid_at, b.recorded_at,
           b.version, coalesce(u.access_count, 0)
    FROM memvault.block b
    LEFT JOIN memvault.block_usage u ON u.vault_id = b.vault_id AND u.block_id = b.id
    WHERE b.vault_id = memvault.current_vault_id() AND b.superseded_by IS NULL AND b.retracted_at IS NULL
    ORDER BY b.valid_at DESC, b.id DESC
    LIMIT greatest(p_limit, 0);
END
$$;
