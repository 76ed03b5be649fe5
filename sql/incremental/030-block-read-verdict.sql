-- The read-time sanitizer's verdict on a block's content (app/read/sanitize.py: the write ruleset's sanitize and
-- AgentDirective), kept for the rules it was judged under, so a recall does not run the rules again over a text
-- they already passed (~0.85 ms of process CPU a recall at 100k memories, docs/recall-cpu.md). A verdict holds for
-- `rules` (the ruleset version and a digest of the rules' code and data) and for the text whose SHA-256 it
-- carries: a recall uses it only when both match (memvault.recall_fast_v3), and otherwise runs the rules and
-- stores the new verdict with its log (memvault.record_recall_v2). Written at write time too (app/write/pipeline.py).
CREATE TABLE memvault.block_read_verdict (
    vault_id    uuid NOT NULL,
    block_id    bigint NOT NULL,
    rules       text NOT NULL,
    text_sha256 bytea NOT NULL,
    clean       boolean NOT NULL,
    judged_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (vault_id, block_id),
    FOREIGN KEY (vault_id, block_id) REFERENCES memvault.block (vault_id, id) ON DELETE CASCADE
) WITH (fillfactor = 80);

ALTER TABLE memvault.block_read_verdict ENABLE ROW LEVEL SECURITY;
ALTER TABLE memvault.block_read_verdict FORCE ROW LEVEL SECURITY;
CREATE POLICY vault_isolation ON memvault.block_read_verdict TO memvault_app
    USING (vault_id = memvault.current_vault_id()) WITH CHECK (vault_id = memvault.current_vault_id());
GRANT SELECT, INSERT, UPDATE, DELETE ON memvault.block_read_verdict TO memvault_app;
