-- The second dense rail (opt-in, settings.rail2_embedder): each block's vector from a second embedding model,
-- filled by the worker's embed_rail2 job after the write (app/read/rail2.py), searched by fast_search_v1 as a
-- third RRF rail when the query brings its own vector of that model. A narrow table of its own: the write
-- track never waits for the second model, blocks without a row yet are simply not on this rail, and switching
-- the model only re-fills this table. The column has no fixed dimension (any model): the rail is searched
-- exactly. content_hash and model tell the fill job which rows are stale.
CREATE TABLE memvault.block_rail2 (
    vault_id     uuid NOT NULL,
    block_id     bigint NOT NULL,
    model        text NOT NULL,
    content_hash bytea NOT NULL,
    embedding    vector NOT NULL,
    embedded_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (vault_id, block_id),
    FOREIGN KEY (vault_id, block_id) REFERENCES memvault.block (vault_id, id) ON DELETE CASCADE
);

ALTER TABLE memvault.block_rail2 ENABLE ROW LEVEL SECURITY;
ALTER TABLE memvault.block_rail2 FORCE ROW LEVEL SECURITY;
CREATE POLICY vault_isolation ON memvault.block_rail2 TO memvault_app
    USING (vault_id = memvault.current_vault_id()) WITH CHECK (vault_id = memvault.current_vault_id());
GRANT SELECT, INSERT, UPDATE, DELETE ON memvault.block_rail2 TO memvault_app;
