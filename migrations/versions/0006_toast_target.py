"""Block and entity rows stay whole up to ~8 KB (toast_tuple_target): with the vector in the row, the default
2 KB target pushed content and tsvector out of line.

The statements live in sql/incremental/006-toast-target.sql; its functions are applied at head.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-22
"""

from alembic import op

from app.db.migrate import apply_incremental

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    apply_incremental(conn, "006-toast-target.sql")


def downgrade() -> None:
    raise NotImplementedError("memvault migrations are forward-only; restore a backup to go back")
