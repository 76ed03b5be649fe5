-- Graph centrality, PPRBoost's input (seed 000 stage 7; seed 004's dream loop gathers "PPR centrality"): each
-- block's ppr_score is computed by the background job graph_centrality from the vault's triples
-- (app/background/centrality.py). This table says when each vault was last scored, and on which graph: a vault
-- is due again when its count of valid triples or its newest triple changed.
CREATE TABLE memvault.graph_centrality_state (
    vault_id    uuid PRIMARY KEY REFERENCES memvault.vault (id) ON DELETE CASCADE,
    triples     bigint NOT NULL,
    max_triple  bigint NOT NULL,
    entities    integer NOT NULL,
    blocks      integer NOT NULL,
    computed_at timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE memvault.graph_centrality_state ENABLE ROW LEVEL SECURITY;
ALTER TABLE memvault.graph_centrality_state FORCE ROW LEVEL SECURITY;
CREATE POLICY vault_isolation ON memvault.graph_centrality_state TO memvault_app
    USING (vault_id = memvault.current_vault_id()) WITH CHECK (vault_id = memvault.current_vault_id());
GRANT SELECT, INSERT, UPDATE, DELETE ON memvault.graph_centrality_state TO memvault_app;
