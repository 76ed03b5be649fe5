"""The second dense rail's table (memvault.block_rail2): vectors of a second embedding model, filled by the
worker after the write, searched as a third RRF rail when settings.rail2_embedder is set (app/read/rail2.py).

The statements live in sql/incremental/011-rail2.sql; its functions are applied at head.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-24
"""

from alembic import op

from app.db.migrate import apply_incremental

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    apply_incremental(conn, "011-rail2.sql")


def downgrade() -> None:
    raise NotImplementedError("memvault migrations are forward-only; restore a backup to go back")
