"""Erasure: vault.deleted_at for the soft delete; purge and the erasure check are functions of
sql/idempotent/095-erasure.sql, applied at head.

The statements live in sql/incremental/019-erasure.sql.

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-25
"""

from alembic import op

from app.db.migrate import apply_incremental

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    apply_incremental(conn, "019-erasure.sql")


def downgrade() -> None:
    raise NotImplementedError("memvault migrations are forward-only; restore a backup to go back")
