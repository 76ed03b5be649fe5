"""Drop dedup_vectors_since_v1, replaced by dedup_vectors_since_v2 (see the file).

The statements live in sql/incremental/025-drop-dedup-vectors-since-v1.sql.

Revision ID: 0025
Revises: 0024
Create Date: 2026-11-25
"""

from alembic import op

from app.db.migrate import apply_incremental

revision = "0025"
down_revision = "0024"
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    apply_incremental(conn, "025-drop-dedup-vectors-since-v1.sql")


def downgrade() -> None:
    raise NotImplementedError("memvault migrations are forward-only; restore a backup to go back")
