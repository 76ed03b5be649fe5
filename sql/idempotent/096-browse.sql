-- The REST API's reads and edits of what a vault holds (app/api/browse.py): memories listed with filters, one
-- memory's fields edited, sessions and turns listed, entities and an entity's neighbourhood. Keyset pagination:
-- each list takes the last row's key (p_after...) and returns at most p_limit rows after it, in a fixed order.
-- Everything is for the vault the connection is set to (memvault.current_vault_id()), under row-level security.

-- Memories, newest first (id descending). p_filter keys, each optional: category, kind, session_id, source_kind,
-- tier, state ('current' by default: neither superseded nor retracted; 'superseded', 'retracted', 'all'),
-- contains (case-insensitive substring of the content), valid_from / valid_to (valid time overlaps the range),
-- recorded_from / recorded_to (this version recorded in the range).
CREATE OR REPLACE FUNCTION memvault.list_blocks_v1(p_filter jsonb, p_after bigint DEFAULT NULL,
                                                   p_limit integer DEFAULT 50)
    RETURNS TABLE (id bigint, kind text, category text, content text, source_kind text, trust_score real,
                   confidence real, tier text, session_id text, valid_at timestamptz, invalid_at timestamptz,
                   superseded_by bigint, recorded_at timestamptz, retracted_at timestamptz, version integer,
                   access_count integer, feedback_up integer, feedback_down integer, metadata jsonb)
    LANGUAGE sql STABLE
    SET search_path = memvault, public, pg_catalog
    AS $$
    SELECT b.id, b.kind, b.category, b.content, b.source_kind, b.trust_score, b.confidence, b.tier, b.session_id,
           b.valid_at, b.invalid_at, b.superseded_by, b.recorded_at, b.retracted_at, b.version,
           coalesce(u.access_count, 0), coalesce(u.feedback_up, 0), coalesce(u.feedback_down, 0), b.metadata
    FROM memvault.block b
    LEFT JOIN memvault.block_usage u ON u.vault_id = b.vault_id AND u.block_id = b.id
    WHERE b.vault_id = memvault.current_vault_id()
      AND (p_after IS NULL OR b.id < p_after)
      AND (p_filter->>'category' IS NULL OR b.category = p_filter->>'category')
      AND (p_filter->>'kind' IS NULL OR b.kind = p_filter->>'kind')
      AND (p_filter->>'session_id' IS NULL OR b.session_id = p_filter->>'session_id')
      AND (p_filter->>'source_kind' IS NULL OR b.source_kind = p_filter->>'source_kind')
      AND (p_filter->>'tier' IS NULL OR b.tier = p_filter->>'tier')
      AND CASE coalesce(p_filter->>'state', 'current')
              WHEN 'current' THEN b.superseded_by IS NULL AND b.retracted_at IS NULL
              WHEN 'superseded' THEN b.superseded_by IS NOT NULL
              WHEN 'retracted' THEN b.retracted_at IS NOT NULL
              ELSE true END
      AND (p_filter->>'contains' IS NULL
           OR strpos(lower(b.content), lower(p_filter->>'contains')) > 0)
      AND (p_filter->>'valid_to' IS NULL OR b.valid_at < (p_filter->>'valid_to')::timestamptz)
      AND (p_filter->>'valid_from' IS NULL OR b.invalid_at IS NULL
           OR b.invalid_at > (p_filter->>'valid_from')::timestamptz)
      AND (p_filter->>'recorded_from' IS NULL OR b.recorded_at >= (p_filter->>'recorded_from')::timestamptz)
      AND (p_filter->>'recorded_to' IS NULL OR b.recorded_at < (p_filter->>'recorded_to')::timestamptz)
    ORDER BY b.id DESC
    LIMIT greatest(p_limit, 0)
$$;

-- Edit a memory's own fields (category, confidence, tier, valid_at, invalid_at; metadata keys merged, a null value
-- removes its key). What it said before stays in block_history (trigger); the audit row has before and after.
-- Content is not edited in place: a new memory that contradicts it supersedes it through the write track.
CREATE OR REPLACE FUNCTION memvault.patch_block_v1(p_block_id bigint, p_patch jsonb, p_actor text DEFAULT 'api')
    RETURNS bigint
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, public, pg_catalog
    AS $$
DECLARE
    v_vault  uuid := memvault.current_vault_id();
    v_before jsonb;
    v_after  jsonb;
BEGIN
    SELECT jsonb_build_object('category', b.category, 'confidence', b.confidence, 'tier', b.tier,
                              'valid_at', b.valid_at, 'invalid_at', b.invalid_at, 'metadata', b.metadata)
      INTO v_before
      FROM memvault.block b WHERE b.vault_id = v_vault AND b.id = p_block_id AND b.retracted_at IS NULL
       FOR UPDATE;
    IF v_before IS NULL THEN
        RAISE EXCEPTION 'no current memory % in this vault', p_block_id
            USING ERRCODE = 'MV404', HINT = 'it does not exist or was deleted; GET /v1/vaults/{vault}/memories';
    END IF;
    UPDATE memvault.block b SET
        category = CASE WHEN p_patch ? 'category' THEN p_patch->>'category' ELSE b.category END,
        confidence = CASE WHEN p_patch ? 'confidence' THEN (p_patch->>'confidence')::real ELSE b.confidence END,
        tier = CASE WHEN p_patch ? 'tier' THEN p_patch->>'tier' ELSE b.tier END,
        valid_at = CASE WHEN p_patch ? 'valid_at' THEN (p_patch->>'valid_at')::timestamptz ELSE b.valid_at END,
        invalid_at = CASE WHEN p_patch ? 'invalid_at' THEN (p_patch->>'invalid_at')::timestamptz
                          ELSE b.invalid_at END,
        metadata = CASE WHEN p_patch ? 'metadata' THEN jsonb_strip_nulls(b.metadata || (p_patch->'metadata'))
                        ELSE b.metadata END
     WHERE b.vault_id = v_vault AND b.id = p_block_id
    RETURNING jsonb_build_object('category', b.category, 'confidence', b.confidence, 'tier', b.tier,
                                 'valid_at', b.valid_at, 'invalid_at', b.invalid_at, 'metadata', b.metadata)
      INTO v_after;
    IF (v_after->>'invalid_at')::timestamptz <= (v_after->>'valid_at')::timestamptz THEN
        RAISE EXCEPTION 'invalid_at (%) must be after valid_at (%)', v_after->>'invalid_at', v_after->>'valid_at'
            USING ERRCODE = 'MV422', HINT = 'a memory stops being true after it starts';
    END IF;
    INSERT INTO memvault.audit_log (vault_id, actor, action, block_id, detail)
    VALUES (v_vault, memvault.audit_actor(p_actor), 'memory.patch',
            p_block_id, jsonb_build_object('before', v_before, 'after', v_after));
    RETURN p_block_id;
END
$$;

-- Sessions, most recent turn first; key (last_turn_at, id).
CREATE OR REPLACE FUNCTION memvault.list_sessions_v1(p_after_at timestamptz DEFAULT NULL,
                                                     p_after_id text DEFAULT NULL, p_limit integer DEFAULT 50,
                                                     p_open boolean DEFAULT NULL)
    RETURNS TABLE (id text, started_at timestamptz, last_turn_at timestamptz, closed_at timestamptz,
                   turn_count integer, summary text, metadata jsonb)
    LANGUAGE sql STABLE
    SET search_path = memvault, public, pg_catalog
    AS $$
    SELECT s.id, s.started_at, s.last_turn_at, s.closed_at, s.turn_count, s.summary, s.metadata
    FROM memvault.session s
    WHERE s.vault_id = memvault.current_vault_id()
      AND (p_after_at IS NULL OR (s.last_turn_at, s.id) < (p_after_at, p_after_id))
      AND (p_open IS NULL OR (s.closed_at IS NULL) = p_open)
    ORDER BY s.last_turn_at DESC, s.id DESC
    LIMIT greatest(p_limit, 0)
$$;

-- A session's turns in the order they were said; key seq.
CREATE OR REPLACE FUNCTION memvault.list_turns_v1(p_session text, p_after_seq integer DEFAULT NULL,
                                                  p_limit integer DEFAULT 100)
    RETURNS TABLE (id bigint, seq integer, role text, content text, said_at timestamptz, recorded_at timestamptz,
                   metadata jsonb)
    LANGUAGE sql STABLE
    SET search_path = memvault, public, pg_catalog
    AS $$
    SELECT t.id, t.seq, t.role, t.content, t.said_at, t.recorded_at, t.metadata
    FROM memvault.turn t
    WHERE t.vault_id = memvault.current_vault_id() AND t.session_id = p_session
      AND (p_after_seq IS NULL OR t.seq > p_after_seq)
    ORDER BY t.seq
    LIMIT greatest(p_limit, 0)
$$;

-- Entities, most mentioned first; key (mention_count, id); p_contains matches the name or an alias.
CREATE OR REPLACE FUNCTION memvault.list_entities_v1(p_contains text DEFAULT NULL, p_after_count integer DEFAULT NULL,
                                                     p_after_id bigint DEFAULT NULL, p_limit integer DEFAULT 50)
    RETURNS TABLE (id bigint, name text, kind text, mention_count integer, aliases text[], created_at timestamptz)
    LANGUAGE sql STABLE
    SET search_path = memvault, public, pg_catalog
    AS $$
    SELECT e.id, e.name, e.kind, e.mention_count,
           coalesce((SELECT array_agg(a.alias ORDER BY a.alias) FROM memvault.entity_alias a
                      WHERE a.vault_id = e.vault_id AND a.entity_id = e.id AND a.alias <> e.name), '{}'),
           e.created_at
    FROM memvault.entity e
    WHERE e.vault_id = memvault.current_vault_id()
      AND (p_after_count IS NULL OR (e.mention_count, e.id) < (p_after_count, p_after_id))
      AND (p_contains IS NULL OR strpos(lower(e.name), lower(p_contains)) > 0
           OR EXISTS (SELECT 1 FROM memvault.entity_alias a WHERE a.vault_id = e.vault_id AND a.entity_id = e.id
                        AND strpos(lower(a.alias), lower(p_contains)) > 0))
    ORDER BY e.mention_count DESC, e.id DESC
    LIMIT greatest(p_limit, 0)
$$;

-- An entity by id or by name: its canonical key (folded as app/write/entities.py folds it, passed in) or an alias.
CREATE OR REPLACE FUNCTION memvault.find_entity_v1(p_id bigint, p_key text)
    RETURNS TABLE (id bigint, name text, kind text, mention_count integer)
    LANGUAGE sql STABLE
    SET search_path = memvault, public, pg_catalog
    AS $$
    SELECT e.id, e.name, e.kind, e.mention_count FROM memvault.entity e
    WHERE e.vault_id = memvault.current_vault_id()
      AND (e.id = p_id OR e.canonical_key = p_key
           OR e.id = (SELECT a.entity_id FROM memvault.entity_alias a
                       WHERE a.vault_id = memvault.current_vault_id() AND a.alias_key = p_key))
    ORDER BY (e.id = p_id) DESC NULLS LAST, (e.canonical_key = p_key) DESC
    LIMIT 1
$$;

-- The relations around an entity, up to p_hops away, valid at p_as_of: the AGE graph walked by
-- graph_expand_v1 (Cypher), each relation with both ends' names and its evidence memory.
CREATE OR REPLACE FUNCTION memvault.entity_neighbourhood_v1(p_entity bigint, p_hops integer DEFAULT 1,
                                                            p_as_of timestamptz DEFAULT NULL,
                                                            p_max_edges integer DEFAULT 200)
    RETURNS TABLE (hop integer, triple_id bigint, subject_id bigint, subject text, predicate text,
                   object_id bigint, object text, evidence_block_id bigint, confidence real,
                   valid_at timestamptz, invalid_at timestamptz)
    LANGUAGE sql STABLE
    SET search_path = memvault, public, pg_catalog
    AS $$
    SELECT g.hop, g.triple_id, g.subject_id, s.name, g.predicate, g.object_id, o.name, g.evidence_block_id,
           g.confidence, t.valid_at, t.invalid_at
    FROM memvault.graph_expand_v1(ARRAY[p_entity], p_hops, p_as_of, p_max_edges) g
    JOIN memvault.triple t ON t.vault_id = memvault.current_vault_id() AND t.id = g.triple_id
    JOIN memvault.entity s ON s.vault_id = t.vault_id AND s.id = g.subject_id
    JOIN memvault.entity o ON o.vault_id = t.vault_id AND o.id = g.object_id
    ORDER BY g.hop, g.triple_id
$$;

-- The entities a memory speaks of: both ends of the relations it is the evidence of.
CREATE OR REPLACE FUNCTION memvault.block_entities_v1(p_block_id bigint)
    RETURNS TABLE (entity_id bigint)
    LANGUAGE sql STABLE
    SET search_path = memvault, public, pg_catalog
    AS $$
    SELECT DISTINCT x.eid FROM memvault.triple t
    CROSS JOIN LATERAL (VALUES (t.subject_id), (t.object_id)) AS x(eid)
    WHERE t.vault_id = memvault.current_vault_id() AND t.evidence_block_id = p_block_id
$$;
