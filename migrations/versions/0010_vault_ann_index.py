"""One HNSW index per large vault (memvault.block_ann_<vault id>, partial) instead of one over every vault's
vectors: a vault's search no longer walks past the other vaults' vectors.

The statement lives in sql/incremental/010-vault-ann-index.sql; its functions are applied at head.
Vaults already past the threshold get their index in the upgrade that reaches head (after the functions are
applied: app/db/migrate.py), so search never falls back to exact scans after the upgrade; from then on the
worker's build_ann_indexes job builds them as vaults grow (app/db/ann_index.py).

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-24
"""

from alembic import op

from app.db.migrate import apply_incremental

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    apply_incremental(conn, "010-vault-ann-index.sql")


def downgrade() -> None:
    raise NotImplementedError("memvault migrations are forward-only; restore a backup to go back")
