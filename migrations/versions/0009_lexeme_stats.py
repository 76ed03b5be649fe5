"""Per-vault document frequency of lexemes (memvault.lexeme_stats), for the sparse rail's term choice and idf,
in place of the planner's table-wide statistics.

The statements live in sql/incremental/009-lexeme-stats.sql; its functions are applied at head.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-22
"""

from alembic import op

from app.db.migrate import apply_incremental

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    apply_incremental(conn, "009-lexeme-stats.sql")


def downgrade() -> None:
    raise NotImplementedError("memvault migrations are forward-only; restore a backup to go back")
