"""A lookup of a block by its key reads one row whatever the statistics: block_session_idx partial, the key rebuilt.

The statements live in sql/incremental/031-block-key-plans.sql.

Revision ID: 0031
Revises: 0030
Create Date: 2026-11-28
"""

from alembic import op

from app.db.migrate import apply_incremental

revision = "0031"
down_revision = "0030"
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    apply_incremental(conn, "031-block-key-plans.sql")


def downgrade() -> None:
    raise NotImplementedError("memvault migrations are forward-only; restore a backup to go back")
