-- The sum of a vault's lexeme counts (lexeme_stats.ndoc summed: its blocks' lengths in distinct lexemes), kept with
-- its count by refresh_lexeme_stats_v1, so BM25 scoring of the sparse rail (_sparse_rail_v2) reads the vault's mean
-- block length without summing lexeme_stats at every query. NULL until the vault is next counted.
ALTER TABLE memvault.lexeme_stats_state ADD COLUMN postings bigint;
