-- The dream's contradiction scan proposes a fourth kind of pair (sql/idempotent/140-dream-scan.sql): 'value', two
-- statements about the same thing that carry different values (a knowledge update).
ALTER TABLE memvault.dream_conflict DROP CONSTRAINT dream_conflict_source_check;
ALTER TABLE memvault.dream_conflict ADD CONSTRAINT dream_conflict_source_check
    CHECK (source IN ('slot', 'semantic', 'value', 'duplicate'));
