-- Functions replaced by newer versions and no longer called by anything (STYLE 3: a new version stands beside the
-- old one until a migration drops it): the per-item write path (append_turns_v1, insert_blocks_v1,
-- dedup_candidates_v1/v2, replaced by the batched append/insert_blocks_v2/dedup_candidates_v3), the array form of
-- the scoring stages (score_candidates_v1, recall_fast_v1, _stage_factor_array_v1, replaced by the named factors
-- of score_candidates_v2/recall_fast_v2) and the unbounded contradiction scan (dream_conflict_scan_v1, replaced
-- by the bounded dream_conflict_scan_v2). Their definitions left sql/idempotent/ in the same commit.
DROP FUNCTION IF EXISTS memvault.recall_fast_v1(vector, text, timestamptz, timestamptz, jsonb, jsonb, integer);
DROP FUNCTION IF EXISTS memvault.score_candidates_v1(bigint[], double precision[], vector, timestamptz, timestamptz,
                                                     jsonb, integer);
DROP FUNCTION IF EXISTS memvault._stage_factor_array_v1(json);
DROP FUNCTION IF EXISTS memvault.append_turns_v1(uuid, text, jsonb);
DROP FUNCTION IF EXISTS memvault.insert_blocks_v1(uuid, jsonb, vector[]);
DROP FUNCTION IF EXISTS memvault.dedup_candidates_v2(uuid, vector[], bytea[], text[], integer, real, integer);
DROP FUNCTION IF EXISTS memvault.dedup_candidates_v1(uuid, vector[], bytea[], integer, real);
DROP FUNCTION IF EXISTS memvault.dedup_candidates_v1(uuid, vector[], bytea[], text[], integer, real);
DROP FUNCTION IF EXISTS memvault.dream_conflict_scan_v1(bigint, text[], timestamptz, text[], double precision,
                                                        integer, integer);
