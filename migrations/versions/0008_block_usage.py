"""A block's read-side signals (access count, last access, feedback) move to memvault.block_usage: updating
them in the wide block row re-inserted the block into every index, HNSW and GIN included, on each recall.

The statements live in sql/incremental/008-block-usage.sql; its functions are applied at head.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-22
"""

from alembic import op

from app.db.migrate import apply_incremental

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    apply_incremental(conn, "008-block-usage.sql")


def downgrade() -> None:
    raise NotImplementedError("memvault migrations are forward-only; restore a backup to go back")
