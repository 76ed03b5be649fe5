"""memvault.block_read_verdict: the read-time sanitizer's verdict on a block's content, kept for its rules.

The statements live in sql/incremental/030-block-read-verdict.sql.

Revision ID: 0030
Revises: 0029
Create Date: 2026-11-28
"""

from alembic import op

from app.db.migrate import apply_incremental

revision = "0030"
down_revision = "0029"
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    apply_incremental(conn, "030-block-read-verdict.sql")


def downgrade() -> None:
    raise NotImplementedError("memvault migrations are forward-only; restore a backup to go back")
