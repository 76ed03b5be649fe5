-- Read-side signals of a block (access count, last access, feedback) move to their own narrow table.
-- Every recall added 1 to the access count of the blocks it returned. In the block row that was a new version of
-- a ~3 KB row: no room for a HOT update on a full page, so each touch also inserted the block again into the
-- HNSW, GIN and btree indexes. At 100k blocks the write-back cost 5 ms of the next recall's p50 and 11 ms of its
-- p95, and its GIN entries piled up in the pending list that every sparse search then scans (a single-lexeme
-- GIN lookup took 2.0 ms with 180 pending pages, 0.09 ms without). A row here is ~60 bytes, its only index is
-- the primary key, and fillfactor 70 leaves room for HOT updates.
CREATE TABLE memvault.block_usage (
    vault_id         uuid NOT NULL,
    block_id         bigint NOT NULL,
    access_count     integer NOT NULL DEFAULT 0 CHECK (access_count >= 0),
    last_accessed_at timestamptz,
    feedback_up      integer NOT NULL DEFAULT 0 CHECK (feedback_up >= 0),
    feedback_down    integer NOT NULL DEFAULT 0 CHECK (feedback_down >= 0),
    PRIMARY KEY (vault_id, block_id),
    FOREIGN KEY (vault_id, block_id) REFERENCES memvault.block (vault_id, id) ON DELETE CASCADE
) WITH (fillfactor = 70);

INSERT INTO memvault.block_usage (vault_id, block_id, access_count, last_accessed_at, feedback_up, feedback_down)
SELECT b.vault_id, b.id, b.access_count, b.last_accessed_at, b.feedback_up, b.feedback_down
FROM memvault.block b
WHERE b.access_count > 0 OR b.last_accessed_at IS NOT NULL OR b.feedback_up > 0 OR b.feedback_down > 0;

ALTER TABLE memvault.block DROP COLUMN access_count, DROP COLUMN last_accessed_at, DROP COLUMN feedback_up,
    DROP COLUMN feedback_down;

ALTER TABLE memvault.block_usage ENABLE ROW LEVEL SECURITY;
ALTER TABLE memvault.block_usage FORCE ROW LEVEL SECURITY;
CREATE POLICY vault_isolation ON memvault.block_usage TO memvault_app
    USING (vault_id = memvault.current_vault_id()) WITH CHECK (vault_id = memvault.current_vault_id());
GRANT SELECT, INSERT, UPDATE, DELETE ON memvault.block_usage TO memvault_app;
