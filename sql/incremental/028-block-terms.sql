-- The sparse rail's narrow table: per block exactly what _sparse_rail_v1/_v2 read of a matched row (the vault, the
-- tsvector, the valid/transaction time filters and the quarantine tags). memvault.block rows are ~4 kB (the
-- 512-d vector in the row, content, tsv), two per heap page, so each GIN match read a page of its own: at a
-- million blocks 4,178 matches cost 5,059 page reads and 118 ms. Here a row is the tsvector and ~60 bytes, many
-- to a page. block.tsv and its index block_tsv_idx stay (the lexeme counts, the PRF pass and other readers use
-- them, and the planner's statistics of block.tsv feed lexeme_stats_v1).
--
-- Kept in step with block by triggers, not by the write path's SQL: blocks are written by many functions
-- (insert_blocks, revise/supersede, retract, quarantine, the importers, re-embedding, the bulk benchmark path)
-- and a trigger is the one place all of them pass; a row's delete goes by the foreign key's cascade. The trigger
-- functions are frozen here with the triggers they serve (as 017-access.sql does), so the backfill, the triggers
-- and the table are created in the migration's one transaction: CREATE TRIGGER locks block against writes until
-- it commits, so no block written meanwhile is missed.
CREATE TABLE memvault.block_terms (
    vault_id        uuid NOT NULL,
    block_id        bigint NOT NULL,
    tsv             tsvector NOT NULL,
    valid_at        timestamptz NOT NULL,
    invalid_at      timestamptz,
    retracted_at    timestamptz,
    quarantine_tags text[] NOT NULL DEFAULT '{}',
    PRIMARY KEY (vault_id, block_id),
    FOREIGN KEY (vault_id, block_id) REFERENCES memvault.block (vault_id, id) ON DELETE CASCADE
);

ALTER TABLE memvault.block_terms ENABLE ROW LEVEL SECURITY;
ALTER TABLE memvault.block_terms FORCE ROW LEVEL SECURITY;
CREATE POLICY vault_isolation ON memvault.block_terms TO memvault_app
    USING (vault_id = memvault.current_vault_id()) WITH CHECK (vault_id = memvault.current_vault_id());
GRANT SELECT, INSERT, UPDATE, DELETE ON memvault.block_terms TO memvault_app;

-- New blocks: one statement-level insert per statement that inserts blocks (the bulk paths insert thousands).
CREATE FUNCTION memvault._block_terms_insert() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = memvault, pg_catalog
    AS $$
BEGIN
    INSERT INTO memvault.block_terms (vault_id, block_id, tsv, valid_at, invalid_at, retracted_at, quarantine_tags)
    SELECT n.vault_id, n.id, n.tsv, n.valid_at, n.invalid_at, n.retracted_at, n.quarantine_tags FROM new_rows n;
    RETURN NULL;
END
$$;
CREATE TRIGGER block_terms_insert AFTER INSERT ON memvault.block
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION memvault._block_terms_insert();

-- Changed blocks: only when a column the rail reads changes (usage counters, scores, embeddings do not fire it).
CREATE FUNCTION memvault._block_terms_update() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = memvault, pg_catalog
    AS $$
BEGIN
    UPDATE memvault.block_terms
       SET tsv = NEW.tsv, valid_at = NEW.valid_at, invalid_at = NEW.invalid_at, retracted_at = NEW.retracted_at,
           quarantine_tags = NEW.quarantine_tags
     WHERE vault_id = NEW.vault_id AND block_id = NEW.id;
    RETURN NULL;
END
$$;
CREATE TRIGGER block_terms_update AFTER UPDATE ON memvault.block FOR EACH ROW
    WHEN ((OLD.tsv, OLD.valid_at, OLD.invalid_at, OLD.retracted_at, OLD.quarantine_tags)
          IS DISTINCT FROM (NEW.tsv, NEW.valid_at, NEW.invalid_at, NEW.retracted_at, NEW.quarantine_tags))
    EXECUTE FUNCTION memvault._block_terms_update();

INSERT INTO memvault.block_terms (vault_id, block_id, tsv, valid_at, invalid_at, retracted_at, quarantine_tags)
SELECT vault_id, id, tsv, valid_at, invalid_at, retracted_at, quarantine_tags FROM memvault.block;

CREATE INDEX block_terms_tsv_idx ON memvault.block_terms USING gin (tsv);
ANALYZE memvault.block_terms;
