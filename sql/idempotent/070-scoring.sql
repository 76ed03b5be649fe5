-- The 11-stage scoring pipeline (seed 000, section III), in the seed's order. Stages 1-8 are per-row
-- multipliers (small inlinable helpers, no SET clause); 9-11 work on the candidate set (score_candidates_v2).
-- Every number is a parameter with the seed's value as default; ScoringConfig (app/read/config.py) fills them
-- per intent. Applied at head. score_candidates_v2 and recall_fast_v2 are plpgsql so that their
-- plans are kept for the session (see 060-read.sql).

-- 1. RecencyBoost: x (1 + w * e^(-age/tau)); age in days relative to the question's as_of, never negative. When
-- the question names a time (QueryTimeframe: "last weekend", "in March"), age is the distance from that window
-- (0 inside it; a memory is inside when it was said in it or names a date in it: window_days_v1), with window_w /
-- window_tau_days instead of recency_w / recency_tau_days, unless no candidate comes within window_reach_days.
CREATE OR REPLACE FUNCTION memvault.recency_boost_v1(p_age_days double precision, p_w double precision DEFAULT 0.15,
                                                     p_tau_days double precision DEFAULT 14)
    RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN 1 + p_w * exp(-least(greatest(p_age_days, 0) / p_tau_days, 700));

-- A date value of the write track's TemporalNormalizer (a block's norm_spans: YYYY-MM-DD, YYYY-MM-DDTHH:MM,
-- YYYY-Www, YYYY-MM, YYYY; wall-clock values, read as UTC) as the span of time it names; null for anything else,
-- a day the calendar does not have included: an export edited by hand can import "2023-02-30" into norm_spans, and
-- to_date would raise on it in the middle of a recall (pg_input_is_valid asks the date type instead).
CREATE OR REPLACE FUNCTION memvault.iso_span_v1(p_value text)
    RETURNS tstzrange
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN CASE
        WHEN p_value ~ '^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])($|T)'
             AND pg_catalog.pg_input_is_valid(substr(p_value, 1, 10), 'date') THEN
            tstzrange(to_date(substr(p_value, 1, 10), 'YYYY-MM-DD')::timestamp AT TIME ZONE 'UTC',
                      (to_date(substr(p_value, 1, 10), 'YYYY-MM-DD') + 1)::timestamp AT TIME ZONE 'UTC')
        WHEN p_value ~ '^\d{4}-W(0[1-9]|[1-4]\d|5[0-3])$' THEN
            tstzrange(to_date(p_value, 'IYYY-"W"IW')::timestamp AT TIME ZONE 'UTC',
                      (to_date(p_value, 'IYYY-"W"IW') + 7)::timestamp AT TIME ZONE 'UTC')
        WHEN p_value ~ '^\d{4}-(0[1-9]|1[0-2])$' THEN
            tstzrange(to_date(p_value, 'YYYY-MM')::timestamp AT TIME ZONE 'UTC',
                      (to_date(p_value, 'YYYY-MM') + interval '1 month') AT TIME ZONE 'UTC')
        WHEN p_value ~ '^\d{4}$' THEN
            tstzrange(to_date(p_value, 'YYYY')::timestamp AT TIME ZONE 'UTC',
                      (to_date(p_value, 'YYYY') + interval '1 year') AT TIME ZONE 'UTC')
    END;

-- Stage 1 with a timeframe: days between the question's window [p_start, p_end) and the memory, which is in it
-- when it was said in it (valid_at) or names a date in it (its norm_spans, resolved against when it was said:
-- "yesterday" said on 8 May names 7 May). A named date counts only when it is no coarser than the window or a
-- week ("2023" does not put a memory inside "the week before 9 June").
-- The part of it that needs no named date: days between the window and when the memory was said (an inlinable
-- expression; score_candidates_v2 asks it alone for a memory whose norm_spans are empty, as most are).
CREATE OR REPLACE FUNCTION memvault.window_gap_days_v1(p_valid_at timestamptz, p_start timestamptz,
                                                       p_end timestamptz)
    RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN greatest(extract(epoch FROM p_start - p_valid_at), extract(epoch FROM p_valid_at - p_end), 0) / 86400.0;

-- Not inlinable (a sub-select): each call runs as a statement of its own (fmgr_sql starts and ends an executor,
-- ~50 us), so score_candidates_v2 does not call it: it writes this body out for a memory that names something (14%
-- of a timeframe question's candidates at 100k), the sub-select a sub-plan of its own query, and asks
-- window_gap_days_v1 alone for the rest (docs/recall-cpu.md, rounds 1 and 4; tests/integration/
-- test_read_window_days.py keeps the two equal). OFFSET 0 keeps the sub-select from being flattened into the outer one,
-- which evaluated iso_span_v1 (four regular expressions and to_date) once per use of r, five times a span instead
-- of once. least() of the two parts: a float8 and a numeric, compared as float8 (rounding is monotonic: the same
-- value as the numeric least, rounded).
CREATE OR REPLACE FUNCTION memvault.window_days_v1(p_valid_at timestamptz, p_spans jsonb, p_start timestamptz,
                                                   p_end timestamptz)
    RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN least(
        memvault.window_gap_days_v1(p_valid_at, p_start, p_end),
        (SELECT min(greatest(extract(epoch FROM p_start - upper(r)), extract(epoch FROM lower(r) - p_end), 0))
                / 86400.0
           FROM (SELECT memvault.iso_span_v1(sp ->> 'value') AS r
                   FROM jsonb_array_elements(CASE jsonb_typeof(p_spans) WHEN 'array' THEN p_spans
                                                 ELSE '[]'::jsonb END) AS sp
                  WHERE sp ->> 'kind' IN ('date', 'datetime')
                 OFFSET 0) AS named
          WHERE r IS NOT NULL
            AND upper(r) - lower(r) <= greatest(p_end - p_start, interval '7 days')));

-- 2. ImportanceWeight: x (0.7 + 0.3 * confidence).
CREATE OR REPLACE FUNCTION memvault.importance_weight_v1(p_confidence double precision,
                                                         p_base double precision DEFAULT 0.7,
                                                         p_w double precision DEFAULT 0.3)
    RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN p_base + p_w * p_confidence;

-- 3. TrustBoost: x (1 - 0.3 * (1 - trust)).
CREATE OR REPLACE FUNCTION memvault.trust_boost_v1(p_trust double precision, p_w double precision DEFAULT 0.3)
    RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN 1 - p_w * (1 - p_trust);

-- 4. FeedbackBoost: x (1 + 0.15 * tanh(net / 3)), net = up - down.
CREATE OR REPLACE FUNCTION memvault.feedback_boost_v1(p_up integer, p_down integer,
                                                      p_w double precision DEFAULT 0.15,
                                                      p_scale double precision DEFAULT 3)
    RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN 1 + p_w * tanh((p_up - p_down) / p_scale);

-- 5. LengthNorm: / (1 + 0.3 * |log2(len / 500)|), len in characters.
CREATE OR REPLACE FUNCTION memvault.length_norm_v1(p_len integer, p_w double precision DEFAULT 0.3,
                                                   p_center double precision DEFAULT 500)
    RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN 1 / (1 + p_w * abs(ln(greatest(p_len, 1) / p_center)) / ln(2.0::double precision));

-- 6a. WeibullDecay's half-life: four tiers by confidence (Core 180 d, Hot 60 d, Warm 30 d, Cold 14 d), stretched
-- by access_count (1 + log2(1 + n), at most 10x): what is read lives longer.
CREATE OR REPLACE FUNCTION memvault.weibull_half_life_v1(
    p_confidence double precision, p_access_count integer,
    p_core double precision DEFAULT 180, p_hot double precision DEFAULT 60,
    p_warm double precision DEFAULT 30, p_cold double precision DEFAULT 14,
    p_conf_core double precision DEFAULT 0.9, p_conf_hot double precision DEFAULT 0.7,
    p_conf_warm double precision DEFAULT 0.4, p_max_stretch double precision DEFAULT 10)
    RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN (CASE WHEN p_confidence >= p_conf_core THEN p_core
                 WHEN p_confidence >= p_conf_hot THEN p_hot
                 WHEN p_confidence >= p_conf_warm THEN p_warm
                 ELSE p_cold END)
           * least(p_max_stretch, 1 + ln(1 + greatest(p_access_count, 0)) / ln(2.0::double precision));

-- 6b. WeibullDecay: survival S(t) = exp(-(t / lambda)^k) with lambda chosen so S(half_life) = 0.5; shape k > 1
-- decays slowly at first and faster after. The multiplier is 1 - w * (1 - S): w is how much decay may take away
-- (1 - w is the steady tail).
CREATE OR REPLACE FUNCTION memvault.weibull_decay_v1(p_age_days double precision, p_half_life double precision,
                                                     p_shape double precision DEFAULT 1.5,
                                                     p_w double precision DEFAULT 0.3)
    RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN 1 - p_w * (1 - exp(-least(power(greatest(p_age_days, 0) / (p_half_life / power(ln(2.0), 1 / p_shape)),
                                             p_shape), 700)));

-- 7. PPRBoost: x (1 + 0.3 * ppr_score), the graph centrality the background track computes (HippoRAG).
CREATE OR REPLACE FUNCTION memvault.ppr_boost_v1(p_ppr double precision, p_w double precision DEFAULT 0.3)
    RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN 1 + p_w * least(greatest(p_ppr, 0), 1);

-- 8. SemanticBoost: x (1 + 0.3 * cosine).
CREATE OR REPLACE FUNCTION memvault.semantic_boost_v1(p_cosine double precision, p_w double precision DEFAULT 0.3)
    RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN 1 + p_w * greatest(p_cosine, 0);

-- Stages 1-11 over a candidate set: p_ids with their base scores (normalized RRF from fast_search_v1, or PPR
-- mass from cascade recall). Keeps the version believed at p_known_at (block_history) when given, then
-- 9 MinScoreGate (< min_score dropped), 10 NoiseFilter (quarantine tags), 11 PairwiseDedup (cosine > 0.85 with a
-- better-scored candidate halves the score, then the gate again). Memories drawn from different turns of one
-- session are never each other's duplicates: a turn is embedded with the end of the turn before it, so an answer
-- and its question sit close (the write track's Dedup already merged what was said twice); measured on LoCoMo
-- dev, coverage@10 0.769 -> 0.777. Returns the best p_limit, best first, with the
-- text to show (a block with a TierDigest shows the digest only, for good: see 120-dream-personal.sql), the eight stage multipliers keyed by stage name (a json
-- object in pipeline order: v2; v1 gave them as an array whose positions Python had to know), and each
-- candidate's nearest better-scored neighbour (for the formatter's near-duplicate collapse).
-- p_cfg keys: recency_w, recency_tau_days, window_start, window_end, window_w, window_tau_days, window_reach_days,
-- dated_w, importance_base,
-- importance_w, trust_w, feedback_w, feedback_scale, length_w, length_center, decay_w, decay_shape, half_life_core/hot/warm/cold, conf_core/hot/warm,
-- access_stretch_max, ppr_w, semantic_w, min_score, noise_tags, dedup_cos, dedup_factor, dedup_window.
CREATE OR REPLACE FUNCTION memvault.score_candidates_v2(
    p_ids      bigint[],
    p_base     double precision[],
    p_qvec     vector,
    p_as_of    timestamptz DEFAULT NULL,
    p_known_at timestamptz DEFAULT NULL,
    p_cfg      jsonb DEFAULT '{}'::jsonb,
    p_limit    integer DEFAULT 50
)
    RETURNS TABLE (id bigint, score double precision, base double precision, cosine double precision,
                   factors json, dup_of bigint, dup_cos double precision,
                   text text, content text, summary text, category text, kind text, source_kind text,
                   trust_score real, confidence real, tier text, token_count integer, session_id text,
                   source_turn_ids bigint[], valid_at timestamptz, recorded_at timestamptz,
                   access_count integer, version integer)
    LANGUAGE plpgsql STABLE
    SET search_path = memvault, public, pg_catalog
    AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH cfg AS (
        SELECT coalesce(p_as_of, now()) AS as_of,
               coalesce((p_cfg ->> 'recency_w')::float8, 0.15) AS recency_w,
               coalesce((p_cfg ->> 'recency_tau_days')::float8, 14) AS recency_tau,
               (p_cfg ->> 'window_start')::timestamptz AS window_start,
               (p_cfg ->> 'window_end')::timestamptz AS window_end,
               coalesce((p_cfg ->> 'window_w')::float8, 0.5) AS window_w,
               coalesce((p_cfg ->> 'window_tau_days')::float8, 7) AS window_tau,
               coalesce((p_cfg ->> 'window_reach_days')::float8, 14) AS window_reach,
               coalesce((p_cfg ->> 'dated_w')::float8, 0) AS dated_w,
               coalesce((p_cfg ->> 'importance_base')::float8, 0.7) AS imp_base,
               coalesce((p_cfg ->> 'importance_w')::float8, 0.3) AS imp_w,
               coalesce((p_cfg ->> 'trust_w')::float8, 0.3) AS trust_w,
               coalesce((p_cfg ->> 'feedback_w')::float8, 0.15) AS fb_w,
               coalesce((p_cfg ->> 'feedback_scale')::float8, 3) AS fb_scale,
               coalesce((p_cfg ->> 'length_w')::float8, 0.3) AS len_w,
               coalesce((p_cfg ->> 'length_center')::float8, 500) AS len_center,
               coalesce((p_cfg ->> 'decay_w')::float8, 0.3) AS decay_w,
               coalesce((p_cfg ->> 'decay_shape')::float8, 1.5) AS decay_shape,
               coalesce((p_cfg ->> 'half_life_core')::float8, 180) AS hl_core,
               coalesce((p_cfg ->> 'half_life_hot')::float8, 60) AS hl_hot,
               coalesce((p_cfg ->> 'half_life_warm')::float8, 30) AS hl_warm,
               coalesce((p_cfg ->> 'half_life_cold')::float8, 14) AS hl_cold,
               coalesce((p_cfg ->> 'conf_core')::float8, 0.9) AS conf_core,
               coalesce((p_cfg ->> 'conf_hot')::float8, 0.7) AS conf_hot,
               coalesce((p_cfg ->> 'conf_warm')::float8, 0.4) AS conf_warm,
               coalesce((p_cfg ->> 'access_stretch_max')::float8, 10) AS stretch_max,
               coalesce((p_cfg ->> 'ppr_w')::float8, 0.3) AS ppr_w,
               coalesce((p_cfg ->> 'semantic_w')::float8, 0.3) AS sem_w,
               coalesce((p_cfg ->> 'min_score')::float8, 0.10) AS min_score,
               coalesce(ARRAY(SELECT jsonb_array_elements_text(p_cfg -> 'noise_tags')),
                        memvault.default_noise_tags_v1()) AS noise,
               coalesce((p_cfg ->> 'dedup_cos')::float8, 0.85) AS dedup_cos,
               coalesce((p_cfg ->> 'dedup_factor')::float8, 0.5) AS dedup_factor,
               coalesce((p_cfg ->> 'dedup_window')::integer, 50) AS dedup_window
    ), cand AS (
        SELECT DISTINCT ON (c.id) c.id, c.base FROM unnest(p_ids, p_base) AS c(id, base) ORDER BY c.id, c.base DESC
    ), ver AS (  -- the version believed at p_known_at (the current one when p_known_at is null or later)
        SELECT b.id, c.base, b.embedding, b.summary, b.digest, b.token_count, b.session_id, b.source_turn_ids,
               b.norm_spans,
               -- Reads stretch the half-life from when they happen: as of a past instant, reads made after it
               -- do not count (a LoCoMo question asked as of 2023 was ranked by reads made in 2026). block_usage
               -- keeps the count and the last read, not each read's time, so a block last read after p_as_of
               -- counts none (a lower bound: some of its reads may have come before).
               CASE WHEN p_as_of IS NULL OR bu.last_accessed_at IS NULL OR bu.last_accessed_at <= p_as_of
                    THEN coalesce(bu.access_count, 0) ELSE 0 END AS access_count,
               coalesce(bu.feedback_up, 0) AS feedback_up,
               coalesce(bu.feedback_down, 0) AS feedback_down, b.ppr_score, b.quarantine_tags,
               coalesce(h.version, b.version) AS version,
               coalesce(h.recorded_at, b.recorded_at) AS recorded_at,
               CASE WHEN h.id IS NULL THEN b.content ELSE h.content END AS content,
               CASE WHEN h.id IS NULL THEN b.category ELSE h.category END AS category,
               CASE WHEN h.id IS NULL THEN b.kind ELSE h.kind END AS kind,
               CASE WHEN h.id IS NULL THEN b.source_kind ELSE h.source_kind END AS source_kind,
               CASE WHEN h.id IS NULL THEN b.trust_score ELSE h.trust_score END AS trust_score,
               CASE WHEN h.id IS NULL THEN b.confidence ELSE h.confidence END AS confidence,
               CASE WHEN h.id IS NULL THEN b.tier ELSE h.tier END AS tier,
               CASE WHEN h.id IS NULL THEN b.valid_at ELSE h.valid_at END AS valid_at,
               CASE WHEN h.id IS NULL THEN b.invalid_at ELSE h.invalid_at END AS invalid_at,
               CASE WHEN h.id IS NULL THEN b.retracted_at ELSE h.retracted_at END AS retracted_at
        FROM cand c
        JOIN memvault.block b ON b.vault_id = memvault.current_vault_id() AND b.id = c.id
        LEFT JOIN memvault.block_usage bu ON bu.vault_id = b.vault_id AND bu.block_id = b.id
        LEFT JOIN LATERAL (
            SELECT bh.* FROM memvault.block_history bh
            WHERE p_known_at IS NOT NULL AND b.recorded_at > p_known_at
              AND bh.vault_id = b.vault_id AND bh.id = b.id
              AND bh.recorded_at <= p_known_at AND bh.replaced_at > p_known_at
            ORDER BY bh.version DESC LIMIT 1
        ) h ON true
        WHERE p_known_at IS NULL OR b.recorded_at <= p_known_at OR h.id IS NOT NULL
    ), visible AS MATERIALIZED (
        SELECT v.*, extract(epoch FROM cfg.as_of - v.valid_at) / 86400.0 AS age_days,
               coalesce(1 - (v.embedding <=> p_qvec), 0) AS cos,
               -- window_days_v1, written out: where a date may be named, its body with its sub-select a sub-plan
               -- of this query (run per row inside it) instead of a call (fmgr_sql: an executor started and ended
               -- per memory, ~50 us); where none is, its first part alone (window_gap_days_v1, inlined).
               CASE WHEN cfg.window_start IS NULL THEN NULL
                    WHEN jsonb_array_length(CASE jsonb_typeof(v.norm_spans) WHEN 'array' THEN v.norm_spans
                                                ELSE '[]'::jsonb END) > 0
                    THEN least(
                        memvault.window_gap_days_v1(v.valid_at, cfg.window_start, cfg.window_end),
                        (SELECT min(greatest(extract(epoch FROM cfg.window_start - upper(r)),
                                             extract(epoch FROM lower(r) - cfg.window_end), 0)) / 86400.0
                           FROM (SELECT memvault.iso_span_v1(sp ->> 'value') AS r
                                   FROM jsonb_array_elements(v.norm_spans) AS sp  -- an array here (the WHEN above)
                                  WHERE sp ->> 'kind' IN ('date', 'datetime')
                                 OFFSET 0) AS named  -- each named date read once (window_days_v1's comment)
                          WHERE r IS NOT NULL
                            AND upper(r) - lower(r) <= greatest(cfg.window_end - cfg.window_start,
                                                                interval '7 days')))
                    ELSE memvault.window_gap_days_v1(v.valid_at, cfg.window_start, cfg.window_end)
               END AS win_days
        FROM ver v, cfg
        WHERE v.valid_at <= cfg.as_of AND (v.invalid_at IS NULL OR v.invalid_at > cfg.as_of)
          AND (v.retracted_at IS NULL OR (p_known_at IS NOT NULL AND v.retracted_at > p_known_at))
          AND NOT (v.quarantine_tags && cfg.noise)                                   -- 10. NoiseFilter
    ), staged AS MATERIALIZED (  -- each row's multipliers computed once
        SELECT v.*, ARRAY[
                   -- 1. A timeframe no candidate comes within window_reach days of cannot be read against
                   -- these memories (a date before any of them, a frame misread): plain recency then.
                   -- dated_w (set for questions about when something happened): x (1 + dated_w) for a memory
                   -- that names a date or time ("yesterday", "last Friday", "in 2019"), where an event's time is
                   CASE WHEN cfg.window_start IS NULL OR v.win_nearest > cfg.window_reach            -- 1
                        THEN memvault.recency_boost_v1(v.age_days, cfg.recency_w, cfg.recency_tau)
                        ELSE memvault.recency_boost_v1(v.win_days, cfg.window_w, cfg.window_tau) END
                   * CASE WHEN cfg.dated_w > 0 AND jsonb_typeof(v.norm_spans) = 'array' AND EXISTS (
                              SELECT 1 FROM jsonb_array_elements(v.norm_spans) sp
                               WHERE sp ->> 'kind' IN ('date', 'datetime'))
                          THEN 1 + cfg.dated_w ELSE 1 END,
                   memvault.importance_weight_v1(v.confidence, cfg.imp_base, cfg.imp_w),          -- 2
                   memvault.trust_boost_v1(v.trust_score, cfg.trust_w),                            -- 3
                   memvault.feedback_boost_v1(v.feedback_up, v.feedback_down, cfg.fb_w, cfg.fb_scale), -- 4
                   memvault.length_norm_v1(length(v.content), cfg.len_w, cfg.len_center),         -- 5
                   memvault.weibull_decay_v1(v.age_days,
                       memvault.weibull_half_life_v1(v.confidence, v.access_count, cfg.hl_core, cfg.hl_hot,
                           cfg.hl_warm, cfg.hl_cold, cfg.conf_core, cfg.conf_hot, cfg.conf_warm, cfg.stretch_max),
                       cfg.decay_shape, cfg.decay_w),                                              -- 6
                   memvault.ppr_boost_v1(v.ppr_score, cfg.ppr_w),                                  -- 7
                   memvault.semantic_boost_v1(v.cos, cfg.sem_w)                                    -- 8
               ] AS f
        FROM (SELECT vi.*, min(vi.win_days) OVER () AS win_nearest FROM visible vi) v, cfg
    ), scored AS (
        SELECT s.*, s.base * s.f[1] * s.f[2] * s.f[3] * s.f[4] * s.f[5] * s.f[6] * s.f[7] * s.f[8] AS s8
        FROM staged s
    ), gated AS (                                                                            -- 9. MinScoreGate
        SELECT s.*, row_number() OVER (ORDER BY s.s8 DESC, s.id) AS rn
        FROM scored s, cfg WHERE s.s8 >= cfg.min_score
    ), win AS MATERIALIZED (  -- the dedup window; l2_normalize (a no-op on unit vectors) detoasts each once
        SELECT g.id, g.rn, g.session_id, g.source_turn_ids, public.l2_normalize(g.embedding) AS embedding
        FROM gated g, cfg
        WHERE g.rn <= cfg.dedup_window AND g.embedding IS NOT NULL
    ), nearest AS MATERIALIZED (                                                             -- 11. PairwiseDedup
        -- each candidate's nearest better-scored one (the better first on a tie): a top-1 per candidate, each
        -- distance computed once, instead of sorting all the window's pairs (~1,200) by candidate and distance
        SELECT a.id, n.dup_of, 1 - n.dist AS dup_cos
        FROM win a
        CROSS JOIN LATERAL (
            SELECT b.id AS dup_of, a.embedding <=> b.embedding AS dist
            FROM win b
            WHERE b.rn < a.rn
              AND NOT (a.session_id = b.session_id  -- two different turns of one session are not duplicates
                       AND cardinality(a.source_turn_ids) > 0 AND cardinality(b.source_turn_ids) > 0
                       AND NOT (a.source_turn_ids && b.source_turn_ids))
            ORDER BY 2, b.rn
            LIMIT 1
        ) n
    ), final AS (
        SELECT g.*, n.dup_of, n.dup_cos,
               g.s8 * CASE WHEN n.dup_cos > cfg.dedup_cos THEN cfg.dedup_factor ELSE 1 END AS s11
        FROM gated g CROSS JOIN cfg LEFT JOIN nearest n ON n.id = g.id
    )
    SELECT f.id, f.s11, f.base, f.cos,
           json_build_object('RecencyBoost', f.f[1], 'ImportanceWeight', f.f[2], 'TrustBoost', f.f[3],
                             'FeedbackBoost', f.f[4], 'LengthNorm', f.f[5], 'WeibullDecay', f.f[6],
                             'PPRBoost', f.f[7], 'SemanticBoost', f.f[8]),
           f.dup_of, f.dup_cos,
           CASE WHEN f.digest IS NOT NULL OR f.tier = 'frozen' THEN coalesce(f.digest, f.summary, f.content)
                ELSE f.content END,
           f.content, f.summary, f.category, f.kind, f.source_kind, f.trust_score, f.confidence, f.tier,
           f.token_count, f.session_id, f.source_turn_ids, f.valid_at, f.recorded_at, f.access_count, f.version
    -- the best p_limit first, then their columns: the factors' json and the text to show built for those rows
    -- only, not for every candidate before the sort (which also carried them: ~0.1 ms a recall, round 5 of docs/recall-cpu.md)
    FROM (SELECT f.* FROM final f, cfg WHERE f.s11 >= cfg.min_score ORDER BY f.s11 DESC, f.id LIMIT p_limit) f
    ORDER BY f.s11 DESC, f.id;
END
$$;

-- The fast path in one call: fast_search_v1's fused candidates through the 11 stages.
CREATE OR REPLACE FUNCTION memvault.recall_fast_v2(
    p_qvec      vector,
    p_query     text,
    p_as_of     timestamptz DEFAULT NULL,
    p_known_at  timestamptz DEFAULT NULL,
    p_search    jsonb DEFAULT '{}'::jsonb,
    p_scoring   jsonb DEFAULT '{}'::jsonb,
    p_limit     integer DEFAULT 50
)
    RETURNS TABLE (id bigint, score double precision, base double precision, cosine double precision,
                   factors json, dup_of bigint, dup_cos double precision,
                   text text, content text, summary text, category text, kind text, source_kind text,
                   trust_score real, confidence real, tier text, token_count integer, session_id text,
                   source_turn_ids bigint[], valid_at timestamptz, recorded_at timestamptz,
                   access_count integer, version integer, dense_rank integer, sparse_rank integer)
    LANGUAGE plpgsql STABLE
    SET search_path = memvault, public, pg_catalog
    AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH c AS MATERIALIZED (
        SELECT * FROM memvault.fast_search_v1(p_qvec, p_query, p_as_of, p_known_at, p_search)
    )
    SELECT s.*, c.dense_rank, c.sparse_rank
    FROM memvault.score_candidates_v2((SELECT array_agg(c.id) FROM c), (SELECT array_agg(c.rrf_norm) FROM c),
                                      p_qvec, p_as_of, p_known_at, p_scoring, p_limit) s
    JOIN c ON c.id = s.id
    ORDER BY s.score DESC, s.id;
END
$$;

-- recall_fast_v2 as one statement of its own, in the vault's scope (memvault._enter_vault_v1, from the connector's
-- vault: app/read/unit.py): a recall with no transaction open sends this alone, in an implicit transaction, instead
-- of BEGIN, the scope's set_config and COMMIT around recall_fast_v2 (issue 33: fewer statements, fewer sends).
-- The same rows as recall_fast_v2 in a transaction of that vault, by construction, in the same order, with one
-- more column: read_clean, the read-time sanitizer's stored verdict on the row's content when it was judged under
-- p_rules (its rules now: app/read/sanitize.py) and the content is still the text judged; else NULL (the
-- sanitizer runs its rules).
CREATE OR REPLACE FUNCTION memvault.recall_fast_v3(
    p_vault     uuid,
    p_actor     text,
    p_qvec      vector,
    p_query     text,
    p_as_of     timestamptz DEFAULT NULL,
    p_known_at  timestamptz DEFAULT NULL,
    p_search    jsonb DEFAULT '{}'::jsonb,
    p_scoring   jsonb DEFAULT '{}'::jsonb,
    p_limit     integer DEFAULT 50,
    p_rules     text DEFAULT NULL
)
    RETURNS TABLE (id bigint, score double precision, base double precision, cosine double precision,
                   factors json, dup_of bigint, dup_cos double precision,
                   text text, content text, summary text, category text, kind text, source_kind text,
                   trust_score real, confidence real, tier text, token_count integer, session_id text,
                   source_turn_ids bigint[], valid_at timestamptz, recorded_at timestamptz,
                   access_count integer, version integer, dense_rank integer, sparse_rank integer,
                   read_clean boolean)
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, public, pg_catalog
    AS $$
#variable_conflict use_column
BEGIN
    PERFORM memvault._enter_vault_v1(p_vault, p_actor);
    RETURN QUERY
    SELECT r.*,
           (SELECT v.clean FROM memvault.block_read_verdict v  -- one primary-key probe a row, whatever the stats
             WHERE v.vault_id = p_vault AND v.block_id = r.id AND v.rules = p_rules
               AND v.text_sha256 = sha256(convert_to(r.content, 'UTF8')))
    FROM memvault.recall_fast_v2(p_qvec, p_query, p_as_of, p_known_at, p_search, p_scoring, p_limit) r
    ORDER BY r.score DESC, r.id;
END
$$;
REVOKE ALL ON FUNCTION memvault.recall_fast_v3(uuid, text, vector, text, timestamptz, timestamptz, jsonb, jsonb,
                                               integer, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memvault.recall_fast_v3(uuid, text, vector, text, timestamptz, timestamptz, jsonb, jsonb,
                                                  integer, text) TO memvault_service;

-- recall_fast_v2 given the sparse side (round 4 of docs/recall-cpu.md): fast_search_v2 with the sparse rail's and
-- its feedback pass's rankings the recall sent ahead (sparse_ahead_v1: _sparse_side_v1 for the same query, times
-- and search keys), the dense rails, RRF and the 11 stages. The same rows as recall_fast_v2 when the rankings
-- are the ones recall_fast_v2 would find.
CREATE OR REPLACE FUNCTION memvault.recall_fast_v4(
    p_qvec      vector,
    p_as_of     timestamptz,
    p_known_at  timestamptz,
    p_search    jsonb,
    p_scoring   jsonb,
    p_limit     integer,
    p_sparse    bigint[],
    p_prf       bigint[]
)
    RETURNS TABLE (id bigint, score double precision, base double precision, cosine double precision,
                   factors json, dup_of bigint, dup_cos double precision,
                   text text, content text, summary text, category text, kind text, source_kind text,
                   trust_score real, confidence real, tier text, token_count integer, session_id text,
                   source_turn_ids bigint[], valid_at timestamptz, recorded_at timestamptz,
                   access_count integer, version integer, dense_rank integer, sparse_rank integer)
    LANGUAGE plpgsql STABLE
    SET search_path = memvault, public, pg_catalog
    AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH c AS MATERIALIZED (
        SELECT * FROM memvault.fast_search_v2(p_qvec, p_as_of, p_known_at, p_search, p_sparse, p_prf)
    )
    SELECT s.*, c.dense_rank, c.sparse_rank
    FROM memvault.score_candidates_v2((SELECT array_agg(c.id) FROM c), (SELECT array_agg(c.rrf_norm) FROM c),
                                      p_qvec, p_as_of, p_known_at, p_scoring, p_limit) s
    JOIN c ON c.id = s.id
    ORDER BY s.score DESC, s.id;
END
$$;

-- recall_fast_v4 as one statement of its own, in the vault's scope, with read_clean: what recall_fast_v3 is to
-- recall_fast_v2 (the vault and the actor put first by the connector: app/read/unit.py).
CREATE OR REPLACE FUNCTION memvault.recall_fast_v5(
    p_vault     uuid,
    p_actor     text,
    p_qvec      vector,
    p_as_of     timestamptz,
    p_known_at  timestamptz,
    p_search    jsonb,
    p_scoring   jsonb,
    p_limit     integer,
    p_sparse    bigint[],
    p_prf       bigint[],
    p_rules     text
)
    RETURNS TABLE (id bigint, score double precision, base double precision, cosine double precision,
                   factors json, dup_of bigint, dup_cos double precision,
                   text text, content text, summary text, category text, kind text, source_kind text,
                   trust_score real, confidence real, tier text, token_count integer, session_id text,
                   source_turn_ids bigint[], valid_at timestamptz, recorded_at timestamptz,
                   access_count integer, version integer, dense_rank integer, sparse_rank integer,
                   read_clean boolean)
    LANGUAGE plpgsql VOLATILE
    SET search_path = memvault, public, pg_catalog
    AS $$
#variable_conflict use_column
BEGIN
    PERFORM memvault._enter_vault_v1(p_vault, p_actor);
    RETURN QUERY
    SELECT r.*,
           (SELECT v.clean FROM memvault.block_read_verdict v  -- one primary-key probe a row, whatever the stats
             WHERE v.vault_id = p_vault AND v.block_id = r.id AND v.rules = p_rules
               AND v.text_sha256 = sha256(convert_to(r.content, 'UTF8')))
    FROM memvault.recall_fast_v4(p_qvec, p_as_of, p_known_at, p_search, p_scoring, p_limit, p_sparse, p_prf) r
    ORDER BY r.score DESC, r.id;
END
$$;
REVOKE ALL ON FUNCTION memvault.recall_fast_v5(uuid, text, vector, timestamptz, timestamptz, jsonb, jsonb, integer,
                                               bigint[], bigint[], text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memvault.recall_fast_v5(uuid, text, vector, timestamptz, timestamptz, jsonb, jsonb,
                                                  integer, bigint[], bigint[], text) TO memvault_service;
