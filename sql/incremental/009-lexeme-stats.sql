-- Document frequency of each lexeme per vault: the sparse rail's term choice and idf (DESIGN: "IDF weights kept in
-- a table"). Until now they came from the planner's statistics of block.tsv (its MCELEM slot), which are
-- table-wide: in a database of many vaults a small vault's rare word looked common because another vault used it,
-- a lexeme outside the ~1,000 most common ones only had a floor estimate, and parsing the slot cost ~2 ms per
-- query. Refreshed by the background job refresh_lexeme_stats (memvault.refresh_lexeme_stats_v1): 0.6 s for a
-- vault of 100,000 blocks.
CREATE TABLE memvault.lexeme_stats (
    vault_id uuid NOT NULL REFERENCES memvault.vault (id) ON DELETE CASCADE,
    lexeme   text NOT NULL,
    ndoc     integer NOT NULL CHECK (ndoc > 0),
    PRIMARY KEY (vault_id, lexeme)
);

-- When each vault's lexeme_stats were counted, over how many blocks.
CREATE TABLE memvault.lexeme_stats_state (
    vault_id     uuid PRIMARY KEY REFERENCES memvault.vault (id) ON DELETE CASCADE,
    blocks       integer NOT NULL,
    lexemes      integer NOT NULL,
    refreshed_at timestamptz NOT NULL DEFAULT now()
);

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['lexeme_stats', 'lexeme_stats_state'] LOOP
        EXECUTE format('ALTER TABLE memvault.%I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE memvault.%I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format(
            'CREATE POLICY vault_isolation ON memvault.%I TO memvault_app '
            'USING (vault_id = memvault.current_vault_id()) '
            'WITH CHECK (vault_id = memvault.current_vault_id())', t);
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON memvault.%I TO memvault_app', t);
    END LOOP;
END
$$;

-- sparse_plan_v1 (pairs of common terms, a fill pass) replaced sparse_terms_v1 in fast_search_v1.
DROP FUNCTION IF EXISTS memvault.sparse_terms_v1(text, integer, double precision);
