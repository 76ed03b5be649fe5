-- The dream's personal layer and upkeep (seed 004): attitudes with version chains and decaying confidence,
-- skills with half-life decline, the daily snapshot and the 7 / 30 / 90-day interest windows, knowledge gaps
-- (structural and repeated failures), surprise discovery's SQL side, tiering with the one-way TierDigest, and the
-- closed-loop prune. Re-applied by every migration: bodies are checked when called.

-- A statement's key: case and spacing do not make another statement.
CREATE OR REPLACE FUNCTION memvault.statement_key_v1(p_text text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT lower(regexp_replace(btrim(p_text), '\s+', ' ', 'g')) $$;

-- Confidence after p_days without corroboration: c * exp(-lambda * days).
CREATE OR REPLACE FUNCTION memvault.decayed_v1(p_confidence double precision, p_days double precision,
                                               p_lambda double precision)
    RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT p_confidence * exp(-p_lambda * greatest(p_days, 0)) $$;

-- Record an attitude of the current vault. The same statement again (same category and key) corroborates the
-- current version: confidence back to the larger of the two, confirmed now, evidence added. Another statement is a
-- new version of the category's chain (previous_id: the latest version): a 'fact' supersedes the category's
-- current facts (superseded_at; kept), a 'preference' coexists with the older ones, which fade unless confirmed.
CREATE OR REPLACE FUNCTION memvault.attitude_upsert_v1(p_category text, p_kind text, p_statement text,
                                                       p_confidence double precision, p_evidence text[],
                                                       p_now timestamptz DEFAULT now())
    RETURNS jsonb
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, pg_catalog
    AS $$
DECLARE
    v_vault uuid := memvault.current_vault_id();
    v_key   text := memvault.statement_key_v1(p_statement);
    v_prev  memvault.attitude;
    r       jsonb;
BEGIN
    UPDATE memvault.attitude a
       SET confidence = greatest(a.confidence, p_confidence), confirmed_at = p_now,
           evidence = ARRAY(SELECT DISTINCT x FROM unnest(a.evidence || coalesce(p_evidence, '{}')) AS x ORDER BY 1)
     WHERE a.vault_id = v_vault AND a.category = p_category AND a.statement_key = v_key AND a.superseded_at IS NULL
    RETURNING to_jsonb(a) - 'vault_id' || '{"corroborated": true}'::jsonb INTO r;
    IF r IS NOT NULL THEN
        RETURN r;
    END IF;
    SELECT * INTO v_prev FROM memvault.attitude a WHERE a.vault_id = v_vault AND a.category = p_category
    ORDER BY a.version DESC LIMIT 1;
    IF p_kind = 'fact' THEN
        UPDATE memvault.attitude a SET superseded_at = p_now
         WHERE a.vault_id = v_vault AND a.category = p_category AND a.kind = 'fact' AND a.superseded_at IS NULL;
    END IF;
    INSERT INTO memvault.attitude AS a (vault_id, category, kind, statement, statement_key, confidence, evidence,
                                        version, previous_id, confirmed_at, created_at)
    VALUES (v_vault, p_category, p_kind, btrim(p_statement), v_key, p_confidence, coalesce(p_evidence, '{}'),
            coalesce(v_prev.version, 0) + 1, v_prev.id, p_now, p_now)
    RETURNING to_jsonb(a) - 'vault_id' || '{"corroborated": false}'::jsonb INTO r;
    RETURN r;
END
$$;

-- The current vault's attitudes with their confidence as of p_now (decayed since last confirmed); suppressed: a
-- superseded fact, or decayed below p_min_confidence (listed only with p_include_suppressed).
CREATE OR REPLACE FUNCTION memvault.attitudes_v1(p_now timestamptz DEFAULT now(),
                                                 p_lambda double precision DEFAULT 0.0077,
                                                 p_min_confidence double precision DEFAULT 0.2,
                                                 p_include_suppressed boolean DEFAULT false)
    RETURNS SETOF jsonb
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    SELECT to_jsonb(x) FROM (
        SELECT a.id, a.category, a.kind, a.statement, a.version, a.previous_id, a.evidence, a.confirmed_at,
               a.superseded_at, a.confidence AS stated_confidence,
               round(memvault.decayed_v1(a.confidence, extract(epoch FROM p_now - a.confirmed_at) / 86400.0,
                                         p_lambda)::numeric, 4) AS confidence,
               (a.superseded_at IS NOT NULL
                OR memvault.decayed_v1(a.confidence, extract(epoch FROM p_now - a.confirmed_at) / 86400.0,
                                       p_lambda) < p_min_confidence) AS suppressed
        FROM memvault.attitude a
        WHERE a.vault_id = memvault.current_vault_id()
    ) x
    WHERE p_include_suppressed OR NOT x.suppressed
    ORDER BY x.category, x.confidence DESC, x.version DESC
$$;

-- Experience of a skill as of p_now: halved every p_half_life_days since its last use.
CREATE OR REPLACE FUNCTION memvault.skill_experience_v1(p_experience double precision, p_days double precision,
                                                        p_half_life_days double precision)
    RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT p_experience * power(0.5, greatest(p_days, 0) / p_half_life_days) $$;

CREATE OR REPLACE FUNCTION memvault.skill_level_v1(p_experience double precision, p_l2 double precision,
                                                   p_l3 double precision)
    RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT CASE WHEN p_experience >= p_l3 THEN 3 WHEN p_experience >= p_l2 THEN 2 ELSE 1 END $$;

-- record_skill_use: one use of a skill adds p_amount to its experience, decayed to p_now first.
CREATE OR REPLACE FUNCTION memvault.record_skill_use_v1(p_name text, p_amount double precision DEFAULT 1.0,
                                                        p_evidence text DEFAULT NULL,
                                                        p_now timestamptz DEFAULT now(),
                                                        p_half_life_days double precision DEFAULT 60,
                                                        p_l2 double precision DEFAULT 2.5,
                                                        p_l3 double precision DEFAULT 8)
    RETURNS jsonb
    LANGUAGE sql VOLATILE
    SET search_path = memvault, pg_catalog
    AS $$
    INSERT INTO memvault.skill AS s (vault_id, name, experience, uses, evidence, last_used_at)
    VALUES (memvault.current_vault_id(), btrim(p_name), p_amount, 1,
            CASE WHEN p_evidence IS NULL THEN '{}'::text[] ELSE ARRAY[p_evidence] END, p_now)
    ON CONFLICT (vault_id, name) DO UPDATE
        SET experience = memvault.skill_experience_v1(s.experience,
                             extract(epoch FROM p_now - s.last_used_at) / 86400.0, p_half_life_days) + p_amount,
            uses = s.uses + 1,
            evidence = CASE WHEN p_evidence IS NULL OR p_evidence = ANY (s.evidence) THEN s.evidence
                            ELSE s.evidence || p_evidence END,
            last_used_at = greatest(s.last_used_at, p_now)
    RETURNING jsonb_build_object('name', s.name, 'experience', round(s.experience::numeric, 4), 'uses', s.uses,
                                 'level', memvault.skill_level_v1(s.experience, p_l2, p_l3),
                                 'last_used_at', s.last_used_at)
$$;

CREATE OR REPLACE FUNCTION memvault.skills_v1(p_now timestamptz DEFAULT now(),
                                              p_half_life_days double precision DEFAULT 60,
                                              p_l2 double precision DEFAULT 2.5, p_l3 double precision DEFAULT 8)
    RETURNS SETOF jsonb
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    SELECT jsonb_build_object('name', x.name, 'experience', round(x.e::numeric, 4), 'uses', x.uses,
                              'level', memvault.skill_level_v1(x.e, p_l2, p_l3), 'last_used_at', x.last_used_at,
                              'evidence', x.evidence)
    FROM (SELECT s.*, memvault.skill_experience_v1(s.experience, extract(epoch FROM p_now - s.last_used_at) / 86400.0,
                                                   p_half_life_days) AS e
          FROM memvault.skill s WHERE s.vault_id = memvault.current_vault_id()) x
    ORDER BY x.e DESC, x.name
$$;

-- The daily snapshot of p_day: the top intents of that day's recalls, the top entities given (by centrality, from
-- the caller), and what changed since the snapshot before it (entities and intents that appeared or dropped out).
-- Written once per day; a second dream that day replaces it.
CREATE OR REPLACE FUNCTION memvault.write_daily_snapshot_v1(p_day date, p_top_entities jsonb, p_top_n integer DEFAULT 10)
    RETURNS jsonb
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, pg_catalog
    AS $$
DECLARE
    v_vault   uuid := memvault.current_vault_id();
    v_intents jsonb;
    v_recalls integer;
    v_prev    memvault.daily_snapshot;
    v_delta   jsonb;
    r         jsonb;
BEGIN
    SELECT coalesce(jsonb_agg(jsonb_build_object('intent', x.intent, 'count', x.n) ORDER BY x.n DESC, x.intent), '[]'),
           coalesce(sum(x.n), 0)
      INTO v_intents, v_recalls
      FROM (SELECT l.intent, count(*)::integer AS n FROM memvault.recall_log l
            WHERE l.vault_id = v_vault AND l.at >= p_day AND l.at < p_day + 1
            GROUP BY l.intent ORDER BY count(*) DESC, l.intent LIMIT p_top_n) x;
    SELECT * INTO v_prev FROM memvault.daily_snapshot s WHERE s.vault_id = v_vault AND s.day < p_day
    ORDER BY s.day DESC LIMIT 1;
    WITH now_e AS (SELECT e->>'name' AS n FROM jsonb_array_elements(p_top_entities) e),
         then_e AS (SELECT e->>'name' AS n FROM jsonb_array_elements(coalesce(v_prev.top_entities, '[]')) e),
         now_i AS (SELECT e->>'intent' AS n FROM jsonb_array_elements(v_intents) e),
         then_i AS (SELECT e->>'intent' AS n FROM jsonb_array_elements(coalesce(v_prev.top_intents, '[]')) e)
    SELECT jsonb_build_object(
        'since', v_prev.day,
        'entities_new', coalesce((SELECT jsonb_agg(n ORDER BY n) FROM now_e WHERE n NOT IN (SELECT n FROM then_e)), '[]'),
        'entities_gone', coalesce((SELECT jsonb_agg(n ORDER BY n) FROM then_e WHERE n NOT IN (SELECT n FROM now_e)), '[]'),
        'intents_new', coalesce((SELECT jsonb_agg(n ORDER BY n) FROM now_i WHERE n NOT IN (SELECT n FROM then_i)), '[]'),
        'intents_gone', coalesce((SELECT jsonb_agg(n ORDER BY n) FROM then_i WHERE n NOT IN (SELECT n FROM now_i)), '[]'),
        'recalls_change', v_recalls - coalesce(v_prev.recalls, 0))
      INTO v_delta;
    INSERT INTO memvault.daily_snapshot AS s (vault_id, day, top_intents, top_entities, recalls, delta)
    VALUES (v_vault, p_day, v_intents, p_top_entities, v_recalls, v_delta)
    ON CONFLICT (vault_id, day) DO UPDATE
        SET top_intents = excluded.top_intents, top_entities = excluded.top_entities, recalls = excluded.recalls,
            delta = excluded.delta, created_at = now()
    RETURNING to_jsonb(s) - 'vault_id' INTO r;
    RETURN r;
END
$$;

-- The interest profile: for each window of p_windows days before p_now, the intents of the recalls and the
-- entities of the memories recorded in it (count, share), and for each entity its 7-day share against its 90-day
-- share (rising > 1 > cooling).
CREATE OR REPLACE FUNCTION memvault.interest_profile_v1(p_now timestamptz DEFAULT now(),
                                                        p_windows integer[] DEFAULT ARRAY[7, 30, 90],
                                                        p_top_n integer DEFAULT 10)
    RETURNS TABLE (window_days integer, recalls integer, intents jsonb, entities jsonb)
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    WITH w AS (SELECT unnest(p_windows) AS days),
    mentions AS (
        SELECT x.e, b.recorded_at FROM memvault.triple t
        JOIN memvault.block b ON b.vault_id = t.vault_id AND b.id = t.evidence_block_id
        CROSS JOIN LATERAL (VALUES (t.subject_id), (t.object_id)) AS x(e)
        WHERE t.vault_id = memvault.current_vault_id() AND b.recorded_at <= p_now
          AND b.recorded_at > p_now - make_interval(days => (SELECT max(days) FROM w))
    ), total AS (
        SELECT w.days, count(m.e) AS n FROM w LEFT JOIN mentions m
            ON m.recorded_at > p_now - make_interval(days => w.days) GROUP BY w.days
    ), per AS (
        SELECT w.days, m.e, count(*) AS n FROM w JOIN mentions m
            ON m.recorded_at > p_now - make_interval(days => w.days) GROUP BY w.days, m.e
    ), share AS (
        SELECT p.days, p.e, p.n, p.n::double precision / nullif(t.n, 0) AS s FROM per p JOIN total t USING (days)
    )
    SELECT w.days,
           (SELECT count(*)::integer FROM memvault.recall_log l WHERE l.vault_id = memvault.current_vault_id()
              AND l.at > p_now - make_interval(days => w.days) AND l.at <= p_now),
           coalesce((SELECT jsonb_agg(jsonb_build_object('intent', i.intent, 'count', i.n) ORDER BY i.n DESC, i.intent)
                     FROM (SELECT l.intent, count(*) AS n FROM memvault.recall_log l
                           WHERE l.vault_id = memvault.current_vault_id()
                             AND l.at > p_now - make_interval(days => w.days) AND l.at <= p_now
                           GROUP BY l.intent ORDER BY count(*) DESC LIMIT p_top_n) i), '[]'),
           coalesce((SELECT jsonb_agg(jsonb_build_object('entity', e.name, 'mentions', s.n,
                                                         'share', round(s.s::numeric, 4),
                                                         'trend', round((s7.s / nullif(s90.s, 0))::numeric, 3))
                                      ORDER BY s.n DESC, e.name)
                     FROM (SELECT * FROM share x WHERE x.days = w.days ORDER BY x.n DESC LIMIT p_top_n) s
                     JOIN memvault.entity e ON e.vault_id = memvault.current_vault_id() AND e.id = s.e
                     LEFT JOIN share s7 ON s7.days = 7 AND s7.e = s.e
                     LEFT JOIN share s90 ON s90.days = 90 AND s90.e = s.e), '[]')
    FROM w ORDER BY w.days
$$;

-- Structural gaps: neighbours in the graph a person keeps returning to one side of. For each entity whose
-- memories were recalled at least p_min_access times, its neighbours whose memories were never recalled
-- ("you talk a lot about A, but never about B").
CREATE OR REPLACE FUNCTION memvault.structural_gaps_v1(p_min_access integer DEFAULT 3, p_limit integer DEFAULT 20)
    RETURNS TABLE (entity text, entity_access bigint, neighbour text, neighbour_access bigint)
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    WITH acc AS (
        SELECT x.e, sum(coalesce(u.access_count, 0)) AS n FROM memvault.triple t
        CROSS JOIN LATERAL (VALUES (t.subject_id), (t.object_id)) AS x(e)
        LEFT JOIN memvault.block_usage u ON u.vault_id = t.vault_id AND u.block_id = t.evidence_block_id
        WHERE t.vault_id = memvault.current_vault_id() AND t.invalid_at IS NULL
        GROUP BY x.e
    ), nb AS (
        SELECT DISTINCT t.subject_id AS a, t.object_id AS b FROM memvault.triple t
        WHERE t.vault_id = memvault.current_vault_id() AND t.invalid_at IS NULL
        UNION SELECT t.object_id, t.subject_id FROM memvault.triple t
        WHERE t.vault_id = memvault.current_vault_id() AND t.invalid_at IS NULL
    )
    SELECT ea.name, aa.n, eb.name, ab.n
    FROM nb JOIN acc aa ON aa.e = nb.a JOIN acc ab ON ab.e = nb.b
    JOIN memvault.entity ea ON ea.vault_id = memvault.current_vault_id() AND ea.id = nb.a
    JOIN memvault.entity eb ON eb.vault_id = memvault.current_vault_id() AND eb.id = nb.b
    WHERE aa.n >= p_min_access AND ab.n = 0
    ORDER BY aa.n DESC, ea.name, eb.name
    LIMIT p_limit
$$;

-- Repeated-failure gaps: questions recall answered INCORRECT (CRAG) at least p_min_failures times, still open.
CREATE OR REPLACE FUNCTION memvault.failure_gaps_v1(p_min_failures integer DEFAULT 2, p_limit integer DEFAULT 20)
    RETURNS TABLE (query text, fail_count integer, first_seen_at timestamptz, last_fail_at timestamptz)
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    SELECT g.query, g.incorrect_count, g.first_seen_at, g.last_seen_at FROM memvault.knowledge_gap g
    WHERE g.vault_id = memvault.current_vault_id() AND g.resolved_at IS NULL AND g.incorrect_count >= p_min_failures
    ORDER BY g.incorrect_count DESC, g.last_seen_at DESC
    LIMIT p_limit
$$;

-- Surprise discovery, cross_community: kept edges between two communities (of resolution p_resolution) with a
-- weight at or above the p_quantile of the vault's kept weights (the dynamic threshold: the median by default;
-- an edge Leiden left between two communities is rare, and a strong one is the surprise).
CREATE OR REPLACE FUNCTION memvault.cross_community_edges_v1(p_resolution double precision DEFAULT 1.0,
                                                             p_quantile double precision DEFAULT 0.5,
                                                             p_limit integer DEFAULT 10)
    RETURNS TABLE (a text, b text, weight real, a_community text, b_community text)
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    WITH cm AS (
        SELECT m.entity_id, c.id, c.label FROM memvault.community_member m
        JOIN memvault.community c ON c.vault_id = m.vault_id AND c.id = m.community_id
        WHERE m.vault_id = memvault.current_vault_id() AND abs(c.resolution - p_resolution) < 1e-6
    ), th AS (
        SELECT percentile_cont(p_quantile) WITHIN GROUP (ORDER BY w.weight) AS t FROM memvault.edge_weight w
        WHERE w.vault_id = memvault.current_vault_id() AND w.kept
    )
    SELECT ea.name, eb.name, w.weight, ca.label, cb.label
    FROM memvault.edge_weight w
    JOIN cm ca ON ca.entity_id = w.a_id JOIN cm cb ON cb.entity_id = w.b_id AND cb.id <> ca.id
    JOIN memvault.entity ea ON ea.vault_id = w.vault_id AND ea.id = w.a_id
    JOIN memvault.entity eb ON eb.vault_id = w.vault_id AND eb.id = w.b_id, th
    WHERE w.vault_id = memvault.current_vault_id() AND w.kept AND w.weight >= th.t
    ORDER BY w.weight DESC, ea.name, eb.name
    LIMIT p_limit
$$;

-- Surprise discovery, knowledge_gap: in a community, a predicate most of the members of one type state (at least
-- p_min_members of them and p_min_share of the type) that a member of that type lacks: an expected neighbour is
-- missing ("Dave lives_in ?").
CREATE OR REPLACE FUNCTION memvault.expected_neighbour_gaps_v1(p_resolution double precision DEFAULT 1.0,
                                                               p_min_members integer DEFAULT 3,
                                                               p_min_share double precision DEFAULT 0.6,
                                                               p_limit integer DEFAULT 20)
    RETURNS TABLE (entity text, predicate text, community text, share double precision)
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    WITH cm AS (
        SELECT m.entity_id, c.id AS cid, c.label FROM memvault.community_member m
        JOIN memvault.community c ON c.vault_id = m.vault_id AND c.id = m.community_id
        WHERE m.vault_id = memvault.current_vault_id() AND abs(c.resolution - p_resolution) < 1e-6
    ), typed AS (
        SELECT cm.*, ty.type FROM cm JOIN memvault.entity_types_v1() ty ON ty.entity_id = cm.entity_id
        WHERE ty.type NOT IN ('thing', 'value')
    ), states AS (
        SELECT DISTINCT t.subject_id AS e, t.predicate FROM memvault.triple t
        WHERE t.vault_id = memvault.current_vault_id() AND t.invalid_at IS NULL
    ), usage AS (
        SELECT ty.cid, ty.type, s.predicate, count(*) AS n,
               count(*)::double precision / (SELECT count(*) FROM typed t2 WHERE t2.cid = ty.cid AND t2.type = ty.type) AS share
        FROM typed ty JOIN states s ON s.e = ty.entity_id
        GROUP BY ty.cid, ty.type, s.predicate
    )
    SELECT e.name, u.predicate, ty.label, u.share
    FROM usage u
    JOIN typed ty ON ty.cid = u.cid AND ty.type = u.type
    JOIN memvault.entity e ON e.vault_id = memvault.current_vault_id() AND e.id = ty.entity_id
    WHERE u.n >= p_min_members AND u.share >= p_min_share
      AND NOT EXISTS (SELECT 1 FROM states s WHERE s.e = ty.entity_id AND s.predicate = u.predicate)
    ORDER BY u.share DESC, e.name, u.predicate
    LIMIT p_limit
$$;

-- When the vault last learned what a block says: the recorded_at of the first version with its current content,
-- category, valid time, trust and confidence. A move between tiers writes a new version (history keeps the one
-- before) but teaches nothing, so it does not count: tiering and the closed-loop prune measure idleness from here
-- (from the row's own recorded_at, a memory moved to cold looked fresh again the next night and moved back up).
CREATE OR REPLACE FUNCTION memvault._learned_at_v1(b memvault.block)
    RETURNS timestamptz
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    SELECT CASE WHEN b.version = 1 THEN b.recorded_at ELSE coalesce((
        SELECT f.recorded_at FROM memvault.block_history f
        WHERE f.vault_id = b.vault_id AND f.id = b.id AND f.version = 1 + coalesce((
            SELECT max(h.version) FROM memvault.block_history h
            WHERE h.vault_id = b.vault_id AND h.id = b.id
              AND (h.content, h.category, h.valid_at, h.invalid_at, h.superseded_by, h.retracted_at, h.trust_score,
                   h.confidence)
                  IS DISTINCT FROM (b.content, b.category, b.valid_at, b.invalid_at, b.superseded_by, b.retracted_at,
                                    b.trust_score, b.confidence)), 0)), b.recorded_at) END
$$;

-- Tiering: where each current memory of the current vault belongs now, by recency (the later of when the vault
-- learned what it says, _learned_at_v1, and when it was last recalled), access and confidence: hot < p_hot_days,
-- warm < p_warm_days, cold < p_cold_days, else frozen. In active use (recalled within p_warm_days, or more upvotes
-- than downvotes) it is never below warm; confidence >= p_keep_confidence never below cold. Returns only the
-- memories whose tier changes, with the text a downward move compresses (the content; a digest already made for a
-- colder tier is never undone).
CREATE OR REPLACE FUNCTION memvault.tier_plan_v1(p_now timestamptz DEFAULT now(), p_hot_days double precision DEFAULT 7,
                                                 p_warm_days double precision DEFAULT 30,
                                                 p_cold_days double precision DEFAULT 180,
                                                 p_keep_confidence double precision DEFAULT 0.9,
                                                 p_limit integer DEFAULT 500)
    RETURNS TABLE (block_id bigint, from_tier text, to_tier text, content text, digest text)
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    WITH x AS (
        SELECT b.id, b.tier, b.content, b.digest, b.confidence,
               extract(epoch FROM p_now - greatest(memvault._learned_at_v1(b),
                                                   coalesce(u.last_accessed_at, '-infinity'))) / 86400.0 AS idle,
               (coalesce(u.last_accessed_at, '-infinity') > p_now - make_interval(secs => p_warm_days * 86400)
                OR coalesce(u.feedback_up, 0) > coalesce(u.feedback_down, 0)) AS active
        FROM memvault.block b
        LEFT JOIN memvault.block_usage u ON u.vault_id = b.vault_id AND u.block_id = b.id
        WHERE b.vault_id = memvault.current_vault_id() AND b.retracted_at IS NULL
          AND b.kind IN ('memory', 'unit', 'chunk')
    ), t AS (
        SELECT x.*, CASE WHEN x.idle < p_hot_days THEN 0 WHEN x.idle < p_warm_days THEN 1
                         WHEN x.idle < p_cold_days THEN 2 ELSE 3 END AS by_age
        FROM x
    ), target AS (
        SELECT t.*, (ARRAY['hot', 'warm', 'cold', 'frozen'])[1 + least(t.by_age, CASE WHEN t.active THEN 1 ELSE 3 END,
                                                                  CASE WHEN t.confidence >= p_keep_confidence THEN 2 ELSE 3 END)] AS tier_to
        FROM t
    )
    SELECT g.id, g.tier, g.tier_to, g.content, g.digest FROM target g
    WHERE g.tier_to <> g.tier
    ORDER BY g.id
    LIMIT p_limit
$$;

-- Apply tier moves: [{"id", "tier", "digest"}]. A digest given (a move down) replaces the shown text for good; a
-- move up changes the tier only (one-way: nothing is decompressed). The content itself stays, and the version
-- before the move is kept in block_history, so erasure and export see the original.
CREATE OR REPLACE FUNCTION memvault.apply_tiers_v1(p_moves jsonb)
    RETURNS integer
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, pg_catalog
    AS $$
DECLARE
    v_n integer;
BEGIN
    UPDATE memvault.block b
       SET tier = m->>'tier', digest = coalesce(m->>'digest', b.digest)
      FROM jsonb_array_elements(p_moves) AS m
     WHERE b.vault_id = memvault.current_vault_id() AND b.id = (m->>'id')::bigint AND b.tier <> m->>'tier';
    GET DIAGNOSTICS v_n = ROW_COUNT;
    IF v_n > 0 THEN
        INSERT INTO memvault.audit_log (vault_id, actor, action, detail)
        VALUES (memvault.current_vault_id(), memvault.audit_actor('worker:dream'),
                'dream.tier', jsonb_build_object('moves', v_n));
    END IF;
    RETURN v_n;
END
$$;

-- Closed-loop prune: memories people marked wrong (at least p_min_down downvotes, more than upvotes) that nobody
-- recalled for p_idle_days (counted from their last recall, or from when the vault learned them) are retracted
-- (transaction time ends; history and sources stay). A memory in active use (recalled within p_idle_days, or
-- upvoted as much) is never pruned. p_dry_run only lists them.
CREATE OR REPLACE FUNCTION memvault.prune_rejected_v1(p_now timestamptz DEFAULT now(), p_min_down integer DEFAULT 2,
                                                      p_idle_days double precision DEFAULT 30,
                                                      p_dry_run boolean DEFAULT false)
    RETURNS bigint[]
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, pg_catalog
    AS $$
DECLARE
    v_ids bigint[];
BEGIN
    SELECT coalesce(array_agg(b.id ORDER BY b.id), '{}') INTO v_ids
    FROM memvault.block b JOIN memvault.block_usage u ON u.vault_id = b.vault_id AND u.block_id = b.id
    WHERE b.vault_id = memvault.current_vault_id() AND b.retracted_at IS NULL
      AND u.feedback_down >= p_min_down AND u.feedback_down > u.feedback_up
      AND greatest(memvault._learned_at_v1(b), coalesce(u.last_accessed_at, '-infinity'))
          < p_now - make_interval(secs => p_idle_days * 86400);
    IF p_dry_run OR cardinality(v_ids) = 0 THEN
        RETURN v_ids;
    END IF;
    UPDATE memvault.block b SET retracted_at = clock_timestamp()
     WHERE b.vault_id = memvault.current_vault_id() AND b.id = ANY (v_ids);
    INSERT INTO memvault.audit_log (vault_id, actor, action, block_id, detail)
    SELECT memvault.current_vault_id(), memvault.audit_actor('worker:dream'),
           'dream.prune', x, jsonb_build_object('rule', 'downvoted and unused')
    FROM unnest(v_ids) AS x;
    RETURN v_ids;
END
$$;


-- What the consolidate stage reads for the personal layer: preferences stated since p_since (category
-- 'Preference', valid), and uses of a skill by the speaker (triples uses / plays / studies whose subject is the
-- vault's user, p_self_keys), each with its session.
CREATE OR REPLACE FUNCTION memvault.dream_preferences_since_v1(p_since timestamptz, p_limit integer DEFAULT 200)
    RETURNS TABLE (block_id bigint, content text, confidence real, session_id text)
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    SELECT b.id, b.content, b.confidence, b.session_id FROM memvault.block b
    WHERE b.vault_id = memvault.current_vault_id() AND b.category = 'Preference' AND b.invalid_at IS NULL
      AND b.retracted_at IS NULL AND b.recorded_at > coalesce(p_since, '-infinity')
    ORDER BY b.valid_at, b.id LIMIT p_limit
$$;

CREATE OR REPLACE FUNCTION memvault.dream_skill_uses_since_v1(p_since timestamptz, p_self_keys text[],
                                                              p_predicates text[] DEFAULT ARRAY['uses', 'plays', 'studies'])
    RETURNS TABLE (skill text, used_at timestamptz, session_id text)
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    SELECT o.name, b.valid_at, b.session_id FROM memvault.triple t
    JOIN memvault.entity s ON s.vault_id = t.vault_id AND s.id = t.subject_id
    JOIN memvault.entity o ON o.vault_id = t.vault_id AND o.id = t.object_id
    JOIN memvault.block b ON b.vault_id = t.vault_id AND b.id = t.evidence_block_id
    WHERE t.vault_id = memvault.current_vault_id() AND t.predicate = ANY (p_predicates)
      AND s.canonical_key = ANY (p_self_keys) AND t.recorded_at > coalesce(p_since, '-infinity')
    ORDER BY b.valid_at, t.id
$$;

-- Entity names by id (the snapshot's top entities, discovery's PPR pairs).
CREATE OR REPLACE FUNCTION memvault.entity_names_v1(p_ids bigint[])
    RETURNS TABLE (entity_id bigint, name text)
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    SELECT e.id, e.name FROM memvault.entity e WHERE e.vault_id = memvault.current_vault_id() AND e.id = ANY (p_ids)
$$;

CREATE OR REPLACE FUNCTION memvault.daily_snapshots_v1(p_limit integer DEFAULT 7)
    RETURNS SETOF jsonb
    LANGUAGE sql STABLE
    SET search_path = memvault, pg_catalog
    AS $$
    SELECT to_jsonb(s) - 'vault_id' FROM memvault.daily_snapshot s WHERE s.vault_id = memvault.current_vault_id()
    ORDER BY s.day DESC LIMIT p_limit
$$;

