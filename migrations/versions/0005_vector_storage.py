"""Vectors stored in the row (STORAGE MAIN), not in TOAST: exact scans read them without a TOAST fetch each.

The statements live in sql/incremental/005-vector-storage.sql; its functions are applied at head.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-22
"""

from alembic import op

from app.db.migrate import apply_incremental

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    apply_incremental(conn, "005-vector-storage.sql")


def downgrade() -> None:
    raise NotImplementedError("memvault migrations are forward-only; restore a backup to go back")
