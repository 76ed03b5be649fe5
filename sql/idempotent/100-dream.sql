-- The dream loop (seed 004; app/background/dream.py): scheduling and the dual gate, the run record, the
-- contradiction scan and the one function that applies a conflict verdict. Applied at head
-- (app/db/migrate.py).

-- A vault's dream schedule: {"dream": {"timezone": "Asia/Taipei", "hour": 4}} in vault.settings; UTC and 04:00
-- by default. Run as the owner (vault rows are read-only to the service role).
CREATE OR REPLACE FUNCTION memvault.set_dream_schedule_v1(p_vault uuid, p_timezone text, p_hour integer)
    RETURNS TABLE (timezone text, hour integer)
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, pg_catalog
    AS $$
BEGIN
    IF p_hour IS NULL OR p_hour NOT BETWEEN 0 AND 23 THEN
        RAISE EXCEPTION 'hour must be 0-23, not %', p_hour USING ERRCODE = 'MV422',
            HINT = 'the local hour at which the vault dreams, e.g. 4';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_timezone_names n WHERE n.name = p_timezone) THEN
        RAISE EXCEPTION 'unknown time zone %', p_timezone USING ERRCODE = 'MV422',
            HINT = 'an IANA name such as UTC, Europe/Paris or Asia/Taipei';
    END IF;
    UPDATE memvault.vault v
       SET settings = jsonb_set(v.settings, '{dream}', jsonb_build_object('timezone', p_timezone, 'hour', p_hour))
     WHERE v.id = p_vault;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'unknown vault %', p_vault USING ERRCODE = 'MV404';
    END IF;
    RETURN QUERY SELECT p_timezone, p_hour;
END
$$;

-- Inlinable helpers: the schedule of a vault's settings.
CREATE OR REPLACE FUNCTION memvault.dream_timezone_v1(p_settings jsonb) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT coalesce(p_settings #>> '{dream,timezone}', 'UTC') $$;
CREATE OR REPLACE FUNCTION memvault.dream_hour_v1(p_settings jsonb) RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT coalesce((p_settings #>> '{dream,hour}')::integer, 4) $$;

-- The dual gate of one vault (seed 004): more than p_min_hours since the last finished dream AND at least
-- p_min_sessions sessions since then (since the vault was created, before its first dream). A session counts when
-- turns of it were recorded since then (transaction time): an import of last year's conversations counts, and so
-- does a session continued after a close; when its conversation began (its started_at, valid time) does not.
CREATE OR REPLACE FUNCTION memvault.dream_gate_v1(p_vault uuid, p_now timestamptz DEFAULT now(),
                                                  p_min_hours double precision DEFAULT 24,
                                                  p_min_sessions integer DEFAULT 5)
    RETURNS TABLE (last_dream_at timestamptz, hours_since double precision, sessions_since integer,
                   blocks_since integer, open boolean)
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    WITH last AS (
        SELECT max(r.started_at) AS at FROM memvault.dream_run r
        WHERE r.vault_id = p_vault AND r.status = 'done' AND NOT r.dry_run
    ), since AS (
        SELECT l.at, coalesce(l.at, (SELECT v.created_at FROM memvault.vault v WHERE v.id = p_vault)) AS from_at
        FROM last l
    ), c AS (
        SELECT s.at, s.from_at,
               (SELECT count(DISTINCT t.session_id) FROM memvault.turn t
                 WHERE t.vault_id = p_vault AND t.recorded_at > s.from_at)::integer AS sess,
               (SELECT count(*) FROM memvault.block b WHERE b.vault_id = p_vault AND b.recorded_at > s.from_at)::integer AS blocks
        FROM since s
    )
    SELECT c.at, extract(epoch FROM p_now - c.at) / 3600.0, c.sess, c.blocks,
           (c.at IS NULL OR p_now - c.at > make_interval(secs => p_min_hours * 3600)) AND c.sess >= p_min_sessions
    FROM c
$$;

-- The vaults to dream now: it is the vault's dream hour in its time zone and the dual gate is open. Run as the
-- owner by the hourly job (every vault).
CREATE OR REPLACE FUNCTION memvault.dream_due_v1(p_now timestamptz DEFAULT now(),
                                                 p_min_hours double precision DEFAULT 24,
                                                 p_min_sessions integer DEFAULT 5)
    RETURNS TABLE (vault_id uuid, name text, timezone text, local_time timestamp, sessions_since integer,
                   last_dream_at timestamptz)
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    SELECT v.id, v.name, memvault.dream_timezone_v1(v.settings),
           p_now AT TIME ZONE memvault.dream_timezone_v1(v.settings), g.sessions_since, g.last_dream_at
    FROM memvault.vault v
    CROSS JOIN LATERAL memvault.dream_gate_v1(v.id, p_now, p_min_hours, p_min_sessions) g
    WHERE extract(hour FROM p_now AT TIME ZONE memvault.dream_timezone_v1(v.settings))::integer
          = memvault.dream_hour_v1(v.settings)
      AND g.open
    ORDER BY v.name
$$;

-- Start a dream of the current vault, or resume its unfinished one (a killed or failed run: attempts + 1, it
-- goes on after the last stage it completed). A dry run is always new and never resumed.
CREATE OR REPLACE FUNCTION memvault.dream_begin_v1(p_trigger text, p_dry_run boolean)
    RETURNS TABLE (run_id bigint, stage text, resumed boolean, stats jsonb)
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, pg_catalog
    AS $$
DECLARE
    v_vault uuid := memvault.current_vault_id();
    r       memvault.dream_run;
BEGIN
    IF v_vault IS NULL THEN
        RAISE EXCEPTION 'dream_begin_v1 needs a vault in scope' USING ERRCODE = 'MV422';
    END IF;
    IF NOT p_dry_run THEN
        UPDATE memvault.dream_run d SET status = 'running', attempts = d.attempts + 1, error = NULL
         WHERE d.vault_id = v_vault AND d.status <> 'done' AND NOT d.dry_run
        RETURNING * INTO r;
        IF FOUND THEN
            RETURN QUERY SELECT r.id, r.stage, true, r.stats;
            RETURN;
        END IF;
    END IF;
    INSERT INTO memvault.dream_run (vault_id, trigger, dry_run) VALUES (v_vault, p_trigger, p_dry_run)
    RETURNING * INTO r;
    RETURN QUERY SELECT r.id, r.stage, false, r.stats;
END
$$;

-- A stage completed: recorded in the same transaction as the stage's own changes, so a run killed after this
-- commit resumes at the next stage and one killed before it redoes this one (whose changes rolled back).
CREATE OR REPLACE FUNCTION memvault.dream_stage_done_v1(p_run bigint, p_stage text, p_stats jsonb)
    RETURNS void
    LANGUAGE sql VOLATILE
    SET search_path = memvault, pg_catalog
    AS $$
    UPDATE memvault.dream_run d SET stage = p_stage, stats = d.stats || jsonb_build_object(p_stage, p_stats)
     WHERE d.vault_id = memvault.current_vault_id() AND d.id = p_run
$$;

CREATE OR REPLACE FUNCTION memvault.dream_finish_v1(p_run bigint, p_status text, p_report jsonb, p_error text,
                                                    p_stats jsonb DEFAULT NULL)
    RETURNS void
    LANGUAGE sql VOLATILE
    SET search_path = memvault, pg_catalog
    AS $$
    UPDATE memvault.dream_run d
       SET status = p_status, report = coalesce(p_report, d.report), error = p_error,
           stats = coalesce(p_stats, d.stats),
           finished_at = CASE WHEN p_status = 'done' THEN clock_timestamp() END,
           wall_ms = CASE WHEN p_status = 'done'
                          THEN (extract(epoch FROM clock_timestamp() - d.started_at) * 1000)::integer END
     WHERE d.vault_id = memvault.current_vault_id() AND d.id = p_run
$$;

-- The current vault's runs, newest first.
CREATE OR REPLACE FUNCTION memvault.dream_runs_v1(p_limit integer DEFAULT 20, p_before bigint DEFAULT NULL)
    RETURNS SETOF jsonb
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    SELECT to_jsonb(d) - 'vault_id' FROM memvault.dream_run d
    WHERE d.vault_id = memvault.current_vault_id() AND (p_before IS NULL OR d.id < p_before)
    ORDER BY d.id DESC LIMIT p_limit
$$;

-- The pairs still to judge, with what the judge is shown: both texts, their valid and invalid time and the
-- session each was said in, and how much depends on each (access, feedback, triples) for the impact score.
CREATE OR REPLACE FUNCTION memvault.dream_conflicts_to_judge_v1(p_limit integer DEFAULT 200)
    RETURNS TABLE (conflict_id bigint, source text, detail jsonb,
                   old_id bigint, old_content text, old_valid_at timestamptz, old_invalid_at timestamptz,
                   old_session text, old_category text,
                   new_id bigint, new_content text, new_valid_at timestamptz, new_session text,
                   cosine double precision, impact_signal double precision)
    LANGUAGE sql STABLE
    SET search_path = memvault, public, pg_catalog
    AS $$
    SELECT c.id, c.source, c.detail,
           o.id, o.content, o.valid_at, o.invalid_at, o.session_id, o.category,
           n.id, n.content, n.valid_at, n.session_id,
           coalesce(1 - (o.embedding <=> n.embedding), 0),
           -- what a change to the older memory disturbs: its use, its feedback, the facts it is evidence of,
           -- and whether it is a decision, constraint or preference
           coalesce(u.access_count, 0) + 3 * coalesce(u.feedback_up, 0)
             + (SELECT count(*) FROM memvault.triple t WHERE t.vault_id = o.vault_id AND t.evidence_block_id = o.id)
             + CASE WHEN o.category IN ('Decision', 'Constraint', 'Preference') THEN 2 ELSE 0 END
    FROM memvault.dream_conflict c
    JOIN memvault.block o ON o.vault_id = c.vault_id AND o.id = c.old_block_id
    JOIN memvault.block n ON n.vault_id = c.vault_id AND n.id = c.new_block_id
    LEFT JOIN memvault.block_usage u ON u.vault_id = o.vault_id AND u.block_id = o.id
    WHERE c.vault_id = memvault.current_vault_id() AND c.status = 'candidate'
    ORDER BY c.id
    LIMIT p_limit
$$;

-- Apply one verdict (the model decided; this applies, deterministically). p_status 'applied' changes memories:
--   SUPERSEDE: the older memory stops being valid when the newer one starts (invalid_at, superseded_by) and so do
--              its triples that the newer memory restates with another object; nothing is deleted.
--   MERGE:     one memory is kept (the longer text; the newer on a tie) and valid from the earlier of the two;
--              the other is retracted (transaction time) with superseded_by pointing at it and its sources
--              recorded on the kept one; history keeps both versions.
--   COEXIST:   nothing changes (status 'kept').
-- p_status 'queued' only records the verdict (the review queue decides). A pair whose memories changed since it
-- was found becomes 'stale' and nothing is applied. Every change has its audit row. Returns the final status.
CREATE OR REPLACE FUNCTION memvault.apply_conflict_verdict_v1(p_conflict bigint, p_action text,
                                                              p_confidence double precision, p_reason text, p_judge text,
                                                              p_status text)
    RETURNS text
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, public, pg_catalog
    AS $$
DECLARE
    v_vault  uuid := memvault.current_vault_id();
    c        memvault.dream_conflict;
    o        memvault.block;
    n        memvault.block;
    v_status text := p_status;
    v_keep   bigint;
    v_drop   bigint;
    v_actor  text := memvault.audit_actor('worker:dream');
BEGIN
    IF p_action NOT IN ('MERGE', 'SUPERSEDE', 'COEXIST') THEN
        RAISE EXCEPTION 'unknown verdict %', p_action USING ERRCODE = 'MV422', HINT = 'MERGE, SUPERSEDE or COEXIST';
    END IF;
    IF p_status NOT IN ('applied', 'queued') THEN
        RAISE EXCEPTION 'p_status must be applied or queued, not %', p_status USING ERRCODE = 'MV422';
    END IF;
    SELECT * INTO c FROM memvault.dream_conflict x WHERE x.vault_id = v_vault AND x.id = p_conflict FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'unknown conflict %', p_conflict USING ERRCODE = 'MV404';
    END IF;
    IF c.status NOT IN ('candidate', 'queued') THEN
        RETURN c.status;  -- decided before: applying twice changes nothing
    END IF;
    SELECT * INTO o FROM memvault.block b WHERE b.vault_id = v_vault AND b.id = c.old_block_id FOR UPDATE;
    SELECT * INTO n FROM memvault.block b WHERE b.vault_id = v_vault AND b.id = c.new_block_id FOR UPDATE;
    IF p_status = 'applied' AND (o.invalid_at IS NOT NULL OR o.retracted_at IS NOT NULL
                                 OR n.invalid_at IS NOT NULL OR n.retracted_at IS NOT NULL) THEN
        v_status := 'stale';
    ELSIF p_status = 'applied' AND p_action = 'COEXIST' THEN
        v_status := 'kept';
    ELSIF p_status = 'applied' AND p_action = 'SUPERSEDE' THEN
        UPDATE memvault.block b SET invalid_at = greatest(n.valid_at, o.valid_at), superseded_by = n.id
         WHERE b.vault_id = v_vault AND b.id = o.id;
        UPDATE memvault.triple t SET invalid_at = greatest(n.valid_at, t.valid_at)
         WHERE t.vault_id = v_vault AND t.evidence_block_id = o.id AND t.invalid_at IS NULL
           AND EXISTS (SELECT 1 FROM memvault.triple t2
                       WHERE t2.vault_id = v_vault AND t2.evidence_block_id = n.id
                         AND t2.subject_id = t.subject_id AND t2.predicate = t.predicate
                         AND t2.object_id <> t.object_id);
        INSERT INTO memvault.audit_log (vault_id, actor, action, block_id, rule, detail)
        VALUES (v_vault, v_actor, 'dream.supersede', o.id, p_judge,
                jsonb_build_object('conflict', c.id, 'superseded_by', n.id, 'invalid_at',
                                   greatest(n.valid_at, o.valid_at), 'confidence', p_confidence,
                                   'reason', p_reason));
    ELSIF p_status = 'applied' AND p_action = 'MERGE' THEN
        IF length(n.content) >= length(o.content) THEN
            v_keep := n.id; v_drop := o.id;
        ELSE
            v_keep := o.id; v_drop := n.id;
        END IF;
        UPDATE memvault.block b SET valid_at = least(o.valid_at, n.valid_at),
                                    confidence = greatest(o.confidence, n.confidence)
         WHERE b.vault_id = v_vault AND b.id = v_keep;
        UPDATE memvault.block b SET retracted_at = clock_timestamp(), superseded_by = v_keep
         WHERE b.vault_id = v_vault AND b.id = v_drop;
        INSERT INTO memvault.block_source (vault_id, block_id, turn_id, session_id, source_kind, said_at, decision)
        SELECT v_vault, v_keep, s.turn_id, s.session_id, s.source_kind, s.said_at, 'MERGE'
        FROM memvault.block_source s WHERE s.vault_id = v_vault AND s.block_id = v_drop;
        INSERT INTO memvault.audit_log (vault_id, actor, action, block_id, rule, detail)
        VALUES (v_vault, v_actor, 'dream.merge', v_drop, p_judge,
                jsonb_build_object('conflict', c.id, 'kept', v_keep, 'confidence', p_confidence,
                                   'reason', p_reason));
    END IF;
    UPDATE memvault.dream_conflict x
       SET status = v_status, action = p_action, confidence = p_confidence, reason = p_reason, judge = p_judge,
           decided_at = CASE WHEN v_status = 'queued' THEN NULL ELSE clock_timestamp() END
     WHERE x.vault_id = v_vault AND x.id = c.id;
    RETURN v_status;
END
$$;

-- Conflicts of the current vault, newest first (GET .../dream/conflicts).
CREATE OR REPLACE FUNCTION memvault.dream_conflicts_v1(p_status text DEFAULT NULL, p_limit integer DEFAULT 50)
    RETURNS SETOF jsonb
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    SELECT to_jsonb(c) - 'vault_id' FROM memvault.dream_conflict c
    WHERE c.vault_id = memvault.current_vault_id() AND (p_status IS NULL OR c.status = p_status)
    ORDER BY c.id DESC LIMIT p_limit
$$;

-- Findings into the discovery inbox (insights, knowledge gaps, surprising links); one per (kind, key) ever.
-- p_items: [{"kind", "key", "title", "detail", "score"}]. Returns how many are new.
CREATE OR REPLACE FUNCTION memvault.discovery_add_v1(p_run bigint, p_items jsonb)
    RETURNS integer
    LANGUAGE sql VOLATILE
    SET search_path = memvault, pg_catalog
    AS $$
    WITH ins AS (
        INSERT INTO memvault.discovery_inbox (vault_id, kind, key, title, detail, score, run_id)
        SELECT memvault.current_vault_id(), x->>'kind', x->>'key', left(x->>'title', 500),
               coalesce(x->'detail', '{}'::jsonb), coalesce((x->>'score')::real, 0), p_run
        FROM jsonb_array_elements(p_items) AS x
        ON CONFLICT (vault_id, kind, key) DO NOTHING
        RETURNING 1
    )
    SELECT count(*)::integer FROM ins
$$;

CREATE OR REPLACE FUNCTION memvault.discovery_list_v1(p_kind text DEFAULT NULL, p_include_dismissed boolean DEFAULT false,
                                                      p_limit integer DEFAULT 50)
    RETURNS SETOF jsonb
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    SELECT to_jsonb(d) - 'vault_id' FROM memvault.discovery_inbox d
    WHERE d.vault_id = memvault.current_vault_id() AND (p_kind IS NULL OR d.kind = p_kind)
      AND (p_include_dismissed OR d.dismissed_at IS NULL)
    ORDER BY d.score DESC, d.id DESC LIMIT p_limit
$$;

CREATE OR REPLACE FUNCTION memvault.discovery_dismiss_v1(p_id bigint)
    RETURNS jsonb
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, pg_catalog
    AS $$
DECLARE
    r jsonb;
BEGIN
    UPDATE memvault.discovery_inbox d SET dismissed_at = coalesce(d.dismissed_at, clock_timestamp())
     WHERE d.vault_id = memvault.current_vault_id() AND d.id = p_id
    RETURNING to_jsonb(d) - 'vault_id' INTO r;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no discovery % in this vault', p_id USING ERRCODE = 'MV404',
            HINT = 'list them: GET /v1/vaults/{vault}/discoveries';
    END IF;
    RETURN r;
END
$$;

-- Orphan entities of the current vault: no triple (valid or not) names them, so nothing in the graph or the
-- memories reaches them (an entity created for a triple that was then dropped). Removed from the tables and the
-- AGE graph at once, at most p_limit; p_dry_run only counts them. Returns the ids.
CREATE OR REPLACE FUNCTION memvault.prune_orphan_entities_v1(p_limit integer DEFAULT 1000, p_dry_run boolean DEFAULT false)
    RETURNS bigint[]
    LANGUAGE plpgsql VOLATILE
    SET search_path = ag_catalog, memvault, public, pg_catalog
    AS $$
DECLARE
    v_vault uuid := memvault.current_vault_id();
    v_graph text;
    v_ids   bigint[];
BEGIN
    SELECT coalesce(array_agg(e.id ORDER BY e.id), '{}') INTO v_ids FROM (
        SELECT e.id FROM memvault.entity e
        WHERE e.vault_id = v_vault
          AND NOT EXISTS (SELECT 1 FROM memvault.triple t WHERE t.vault_id = v_vault AND t.subject_id = e.id)
          AND NOT EXISTS (SELECT 1 FROM memvault.triple t WHERE t.vault_id = v_vault AND t.object_id = e.id)
        ORDER BY e.id LIMIT p_limit
    ) e;
    IF p_dry_run OR cardinality(v_ids) = 0 THEN
        RETURN v_ids;
    END IF;
    SELECT v.graph_name INTO v_graph FROM memvault.vault v WHERE v.id = v_vault;
    EXECUTE format('SELECT count(*) FROM ag_catalog.cypher(%L, $c$ MATCH (n:Entity) WHERE n.eid IN $eids '
                   'DETACH DELETE n $c$, $1) AS (x ag_catalog.agtype)', v_graph)
        USING jsonb_build_object('eids', to_jsonb(v_ids))::text::ag_catalog.agtype;
    DELETE FROM memvault.entity e WHERE e.vault_id = v_vault AND e.id = ANY (v_ids);
    INSERT INTO memvault.audit_log (vault_id, actor, action, detail)
    VALUES (v_vault, memvault.audit_actor('worker:dream'),
            'dream.prune_orphans', jsonb_build_object('entities', to_jsonb(v_ids)));
    RETURN v_ids;
END
$$;

-- The reflect stage's snapshot: the newest p_limit valid memories of the kinds p_kinds recorded since p_since,
-- oldest first.
CREATE OR REPLACE FUNCTION memvault.dream_snapshot_v1(p_since timestamptz, p_kinds text[], p_limit integer DEFAULT 60)
    RETURNS TABLE (id bigint, content text)
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    SELECT x.id, x.content FROM (
        SELECT b.id, b.content, b.recorded_at FROM memvault.block b
        WHERE b.vault_id = memvault.current_vault_id() AND b.kind = ANY (p_kinds) AND b.invalid_at IS NULL
          AND b.retracted_at IS NULL AND b.recorded_at > coalesce(p_since, '-infinity')
        ORDER BY b.recorded_at DESC, b.id DESC LIMIT p_limit
    ) x ORDER BY x.recorded_at, x.id
$$;

-- The orient stage's counts of the current vault.
CREATE OR REPLACE FUNCTION memvault.dream_counts_v1()
    RETURNS TABLE (blocks bigint, valid_blocks bigint, entities bigint, valid_triples bigint)
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    SELECT (SELECT count(*) FROM memvault.block b WHERE b.vault_id = memvault.current_vault_id()),
           (SELECT count(*) FROM memvault.block b WHERE b.vault_id = memvault.current_vault_id()
                AND b.invalid_at IS NULL AND b.retracted_at IS NULL),
           (SELECT count(*) FROM memvault.entity e WHERE e.vault_id = memvault.current_vault_id()),
           (SELECT count(*) FROM memvault.triple t WHERE t.vault_id = memvault.current_vault_id()
                AND t.invalid_at IS NULL)
$$;

-- Open review items of the current vault.
CREATE OR REPLACE FUNCTION memvault.review_open_count_v1()
    RETURNS bigint
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    SELECT count(*) FROM memvault.review_queue q
    WHERE q.vault_id = memvault.current_vault_id() AND q.status IN ('PENDING', 'CLAIMED')
$$;

