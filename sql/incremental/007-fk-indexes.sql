-- Indexes behind the foreign keys that had none. Deleting a block checks block.superseded_by for rows that
-- still point at it, and deleting an entity cascades to entity_alias; without an index each deleted row scanned
-- the table, so dropping a vault of 100,000 blocks ran for more than 10 minutes (n deletes x n rows).
CREATE INDEX block_superseded_idx ON memvault.block (vault_id, superseded_by) WHERE superseded_by IS NOT NULL;
CREATE INDEX entity_alias_entity_idx ON memvault.entity_alias (vault_id, entity_id);
CREATE INDEX api_key_vault_idx ON memvault.api_key (vault_id);
