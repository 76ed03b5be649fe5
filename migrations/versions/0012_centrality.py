"""Graph centrality for PPRBoost: memvault.graph_centrality_state, the record of when each vault's block
ppr_score was computed from its triples (app/background/centrality.py).

The statements live in sql/incremental/012-centrality.sql; its functions are applied at head.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-24
"""

from alembic import op

from app.db.migrate import apply_incremental

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    apply_incremental(conn, "012-centrality.sql")


def downgrade() -> None:
    raise NotImplementedError("memvault migrations are forward-only; restore a backup to go back")
