-- Rows of up to ~8 KB stay whole in the heap. With the vector in the row (005-vector-storage.sql), a block row
-- passed the default 2 KB toast target on the vector alone, so PostgreSQL moved content, normalized and tsv out
-- of line: the sparse rail then fetched each matching row's tsvector from TOAST once per query term (25,800
-- buffer reads and 58 ms for 1,228 matches in a 100k vault). A long chunk (1,200 characters, its normalized
-- text and tsvector) plus a 512-d vector fits in one 8 KB page. Applies to rows written from now on; VACUUM FULL
-- memvault.block rewrites the existing ones.
ALTER TABLE memvault.block SET (toast_tuple_target = 8160);
ALTER TABLE memvault.entity SET (toast_tuple_target = 8160);
