"""Drop dedup_vectors_since_v1, dream_conflict_scan_v2 and value_tokens_v1: newer versions replaced them (see the
file).

The statements live in sql/incremental/025-drop-superseded-functions.sql.

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
    apply_incremental(conn, "025-drop-superseded-functions.sql")


def downgrade() -> None:
    raise NotImplementedError("memvault migrations are forward-only; restore a backup to go back")
