"""The vault's summed lexeme counts (lexeme_stats_state.postings), for BM25's mean block length in the sparse rail.

The statements live in sql/incremental/026-lexeme-postings.sql; its functions are applied at head.

Revision ID: 0026
Revises: 0025
Create Date: 2026-11-27
"""

from alembic import op

from app.db.migrate import apply_incremental

revision = "0026"
down_revision = "0025"
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    apply_incremental(conn, "026-lexeme-postings.sql")


def downgrade() -> None:
    raise NotImplementedError("memvault migrations are forward-only; restore a backup to go back")
