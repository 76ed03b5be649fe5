"""Drop the SQL functions that newer versions replaced and nothing calls any more (see the file).

The statements live in sql/incremental/024-drop-superseded-functions.sql.

Revision ID: 0024
Revises: 0023
Create Date: 2026-11-25
"""

from alembic import op

from app.db.migrate import apply_incremental

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    apply_incremental(conn, "024-drop-superseded-functions.sql")


def downgrade() -> None:
    raise NotImplementedError("memvault migrations are forward-only; restore a backup to go back")
