-- 019-erasure: soft delete of a vault (the default of DELETE /v1/vaults/{vault}); the hard delete (purge) and the
-- erasure check are functions in sql/idempotent/095-erasure.sql. A soft-deleted vault keeps everything and
-- refuses use; its name stays taken until it is purged.
ALTER TABLE memvault.vault ADD COLUMN deleted_at timestamptz;
