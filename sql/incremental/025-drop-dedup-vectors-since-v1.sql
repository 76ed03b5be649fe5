-- dedup_vectors_since_v1 told the bulk path's vector mirror only whether a block was a chunk; since a session's
-- summary is a Dedup layer of its own (app/write/batch.py), dedup_vectors_since_v2 names each block's layer
-- ('chunk', 'summary', 'curated'). Nothing calls v1; its definition left sql/idempotent/040-write.sql in the same
-- commit.
DROP FUNCTION IF EXISTS memvault.dedup_vectors_since_v1(uuid, bigint);
