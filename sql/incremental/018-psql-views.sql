-- Views for ad-hoc work in psql (README, "Querying with psql"). security_invoker: a view reads its tables with
-- the rights of whoever queries it, so row-level security applies as on the tables themselves: memvault_app with
-- memvault.vault_id set sees that vault only; the owner (the DBA in psql) sees every vault. Each view names the
-- vault, so `WHERE vault = 'alice'` is all a DBA needs.

-- Memories with their provenance: state, usage, feedback, and every place each was said (block_source).
CREATE VIEW memvault.memories WITH (security_invoker = true) AS
SELECT v.name AS vault, b.id, b.kind, b.category, b.content, b.source_kind, b.trust_score, b.confidence, b.tier,
       b.session_id,
       CASE WHEN b.retracted_at IS NOT NULL THEN 'retracted'
            WHEN b.superseded_by IS NOT NULL THEN 'superseded'
            WHEN b.invalid_at IS NOT NULL AND b.invalid_at <= now() THEN 'ended'
            ELSE 'current' END AS state,
       b.valid_at, b.invalid_at, b.superseded_by, b.recorded_at, b.retracted_at, b.version,
       coalesce(u.access_count, 0) AS access_count, u.last_accessed_at,
       coalesce(u.feedback_up, 0) AS feedback_up, coalesce(u.feedback_down, 0) AS feedback_down,
       b.source_turn_ids,
       (SELECT jsonb_agg(jsonb_build_object('turn_id', s.turn_id, 'session_id', s.session_id,
                                            'said_at', s.said_at, 'decision', s.decision)
                         ORDER BY s.said_at, s.recorded_at)
          FROM memvault.block_source s WHERE s.vault_id = b.vault_id AND s.block_id = b.id) AS sources,
       b.metadata, b.vault_id
FROM memvault.block b
JOIN memvault.vault v ON v.id = b.vault_id
LEFT JOIN memvault.block_usage u ON u.vault_id = b.vault_id AND u.block_id = b.id;

-- The entity graph as rows: each relation with both ends' names, its valid time and the memory it came from.
-- (The same graph in Cypher: each vault's AGE graph, memvault.vault.graph_name.)
CREATE VIEW memvault.entity_graph WITH (security_invoker = true) AS
SELECT v.name AS vault, t.id AS triple_id, s.name AS subject, t.predicate, o.name AS object, t.confidence,
       t.valid_at, t.invalid_at, t.recorded_at, t.evidence_block_id, left(b.content, 200) AS evidence,
       t.subject_id, t.object_id, t.vault_id
FROM memvault.triple t
JOIN memvault.vault v ON v.id = t.vault_id
JOIN memvault.entity s ON s.vault_id = t.vault_id AND s.id = t.subject_id
JOIN memvault.entity o ON o.vault_id = t.vault_id AND o.id = t.object_id
LEFT JOIN memvault.block b ON b.vault_id = t.vault_id AND b.id = t.evidence_block_id;

-- Memory health, one row per vault:
-- - dedup_rate: the share of writes Dedup found already known (SKIP or MERGE among all write decisions);
-- - duplicate_rate: the share of current memories whose exact text another current memory also holds;
-- - stale_facts: current facts whose valid time has ended but nothing superseded them; unused_90d: current
--   memories older than 90 days never recalled;
-- - tiers: current memories per lifecycle tier;
-- - mean_decay / decayed: WeibullDecay's multiplier (scoring stage 6, its default half-lives and shape) over the
--   current memories, and how many it has taken more than half of what it may take (multiplier < 0.85).
CREATE VIEW memvault.memory_health WITH (security_invoker = true) AS
WITH cur AS (
    SELECT b.vault_id, b.category, b.tier, b.content_hash, b.invalid_at, b.valid_at,
           coalesce(u.access_count, 0) AS access_count,
           memvault.weibull_decay_v1(extract(epoch FROM now() - b.valid_at) / 86400.0,
                                     memvault.weibull_half_life_v1(b.confidence, coalesce(u.access_count, 0)))
               AS decay
    FROM memvault.block b
    LEFT JOIN memvault.block_usage u ON u.vault_id = b.vault_id AND u.block_id = b.id
    WHERE b.superseded_by IS NULL AND b.retracted_at IS NULL
), per_vault AS (
    SELECT c.vault_id, count(*) AS memories,
           count(*) FILTER (WHERE c.category = 'Fact' AND c.invalid_at IS NOT NULL AND c.invalid_at <= now())
               AS stale_facts,
           count(*) FILTER (WHERE c.access_count = 0 AND c.valid_at < now() - interval '90 days') AS unused_90d,
           count(*) FILTER (WHERE c.tier = 'hot') AS hot, count(*) FILTER (WHERE c.tier = 'warm') AS warm,
           count(*) FILTER (WHERE c.tier = 'cold') AS cold, count(*) FILTER (WHERE c.tier = 'frozen') AS frozen,
           round(avg(c.decay)::numeric, 3) AS mean_decay, count(*) FILTER (WHERE c.decay < 0.85) AS decayed
    FROM cur c GROUP BY c.vault_id
), dup AS (
    SELECT d.vault_id, sum(d.n) FILTER (WHERE d.n > 1) AS duplicated
    FROM (SELECT vault_id, content_hash, count(*) AS n FROM cur GROUP BY vault_id, content_hash) d
    GROUP BY d.vault_id
), writes AS (
    SELECT s.vault_id, count(*) AS writes, count(*) FILTER (WHERE s.decision IN ('SKIP', 'MERGE')) AS known
    FROM memvault.block_source s GROUP BY s.vault_id
)
SELECT v.name AS vault, coalesce(p.memories, 0) AS memories,
       round(coalesce(w.known, 0)::numeric / nullif(w.writes, 0), 3) AS dedup_rate,
       round(coalesce(d.duplicated, 0)::numeric / nullif(p.memories, 0), 3) AS duplicate_rate,
       coalesce(p.stale_facts, 0) AS stale_facts, coalesce(p.unused_90d, 0) AS unused_90d,
       coalesce(p.hot, 0) AS hot, coalesce(p.warm, 0) AS warm, coalesce(p.cold, 0) AS cold,
       coalesce(p.frozen, 0) AS frozen, p.mean_decay, coalesce(p.decayed, 0) AS decayed, v.id AS vault_id
FROM memvault.vault v
LEFT JOIN per_vault p ON p.vault_id = v.id
LEFT JOIN dup d ON d.vault_id = v.id
LEFT JOIN writes w ON w.vault_id = v.id
WHERE memvault.current_vault_id() IS NULL OR v.id = memvault.current_vault_id();

GRANT SELECT ON memvault.memories, memvault.entity_graph, memvault.memory_health TO memvault_app;
