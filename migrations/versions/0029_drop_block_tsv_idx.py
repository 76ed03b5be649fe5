"""Drop block.tsv's GIN index block_tsv_idx: the sparse rail and the baselines search memvault.block_terms.

The statement lives in sql/incremental/029-drop-block-tsv-idx.sql.

Revision ID: 0029
Revises: 0028
Create Date: 2026-11-28
"""

from alembic import op

from app.db.migrate import apply_incremental

revision = "0029"
down_revision = "0028"
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    apply_incremental(conn, "029-drop-block-tsv-idx.sql")


def downgrade() -> None:
    raise NotImplementedError("memvault migrations are forward-only; restore a backup to go back")
