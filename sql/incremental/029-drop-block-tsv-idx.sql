-- block.tsv's GIN index: no statement searches block.tsv through it any more. The sparse rail reads the narrow
-- memvault.block_terms (028-block-terms.sql, its own GIN index block_terms_tsv_idx), and so do the benchmarks'
-- baselines (app/bench/baselines.py); what still reads block.tsv (the lexeme counts, the PRF pass, the planner's
-- statistics behind lexeme_stats_v1) reads it by the vault's rows, never by `@@` through this index. Each block
-- written paid both GIN indexes: +0.75 ms of PostgreSQL CPU a turn with its session's close (bench ingest, API).
DROP INDEX memvault.block_tsv_idx;
