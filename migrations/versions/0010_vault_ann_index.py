"""One HNSW index per large vault (memvault.block_ann_<vault id>, partial) instead of one over every vault's
vectors: a vault's search no longer walks past the other vaults' vectors.

The statement lives in sql/incremental/010-vault-ann-index.sql; the functions are re-applied as in every revision.
Vaults already past the threshold get their index here, inside the migration's transaction (not concurrently),
so search never falls back to exact scans after the upgrade; from then on the worker's build_ann_indexes job
builds them as vaults grow (app/db/ann_index.py).

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-24
"""

from alembic import op

from app.db.migrate import apply_idempotent, apply_incremental, run_sql

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    apply_incremental(conn, "010-vault-ann-index.sql")
    apply_idempotent(conn)
    run_sql(conn, "SELECT memvault.build_due_ann_indexes_v1(5000)")


def downgrade() -> None:
    raise NotImplementedError("memvault migrations are forward-only; restore a backup to go back")
