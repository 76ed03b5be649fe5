-- Functions replaced by newer versions and no longer called by anything (STYLE 3: a migration drops them; their
-- definitions left sql/idempotent/):
-- - dedup_vectors_since_v1 told the bulk path's vector mirror only whether a block was a chunk; since a session's
--   summary is a Dedup layer of its own (app/write/batch.py), dedup_vectors_since_v2 names each block's layer.
-- - dream_conflict_scan_v2 and value_tokens_v1 spelled the value pattern out; v3 and value_tokens_v2 take it as a
--   parameter (app/models/tasks/values.py). 140-dream-scan.sql dropped them itself until this migration.
DROP FUNCTION IF EXISTS memvault.dedup_vectors_since_v1(uuid, bigint);
DROP FUNCTION IF EXISTS memvault.dream_conflict_scan_v2(bigint, text[], timestamptz, text[], double precision,
                                                        double precision, integer, integer, integer, integer);
DROP FUNCTION IF EXISTS memvault.value_tokens_v1(text);
