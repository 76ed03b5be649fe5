-- Vectors stay in the row (STORAGE MAIN) instead of the TOAST table. A 512-d vector is 2,052 bytes, just over
-- the 2,032-byte TOAST threshold, so with the type's default (EXTENDED) every vector went out of line and each
-- distance computed by an exact scan (dedup candidates, the dense rail of a small vault) paid a TOAST fetch:
-- an exact top-3 over 2,000 rows took 19 ms, 2.7 ms inline. MAIN still moves a vector out of line as a last
-- resort, so rows with 3,072-d vectors keep fitting on a page. Applies to rows written from now on.
ALTER TABLE memvault.block ALTER COLUMN embedding SET STORAGE MAIN;
ALTER TABLE memvault.entity ALTER COLUMN embedding SET STORAGE MAIN;
