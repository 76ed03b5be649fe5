"""The sparse rail's narrow table memvault.block_terms (tsv + filters), kept by triggers, backfilled.

The statements live in sql/incremental/028-block-terms.sql.

Revision ID: 0028
Revises: 0027
Create Date: 2026-11-28
"""

from alembic import op

from app.db.migrate import apply_incremental

revision = "0028"
down_revision = "0027"
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    apply_incremental(conn, "028-block-terms.sql")


def downgrade() -> None:
    raise NotImplementedError("memvault migrations are forward-only; restore a backup to go back")
