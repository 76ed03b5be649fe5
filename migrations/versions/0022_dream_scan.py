"""The dream's bounded contradiction scan (seed 004): dream_conflict accepts the 'value' pairs it proposes.

The statements live in sql/incremental/022-dream-scan.sql; its functions are applied at head.

Revision ID: 0022
Revises: 0020
Create Date: 2026-11-25
"""

from alembic import op

from app.db.migrate import apply_incremental

revision = "0022"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    apply_incremental(conn, "022-dream-scan.sql")


def downgrade() -> None:
    raise NotImplementedError("memvault migrations are forward-only; restore a backup to go back")
