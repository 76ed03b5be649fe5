"""Sessions in segments: turns sent to a closed session reopen it, and its next close extracts only the turns
after the previous close (memvault.session.closed_through, segments; append_turns_v2, close_session_v2).

The statements live in sql/incremental/015-session-segments.sql; its functions are applied at head.

Revision ID: 0015
Revises: 0012
Create Date: 2026-11-25
"""

from alembic import op

from app.db.migrate import apply_incremental

revision = "0015"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    apply_incremental(conn, "015-session-segments.sql")


def downgrade() -> None:
    raise NotImplementedError("memvault migrations are forward-only; restore a backup to go back")
