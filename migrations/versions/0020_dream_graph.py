"""What the dream loop learns (seed 004): canonical predicates and type affinities (reference data), multi-signal
edge weights, Leiden communities and their summaries, attitudes, skills, daily snapshots and lint findings.

The statements live in sql/incremental/020-dream-graph.sql; its functions are applied at head.

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-24
"""

from alembic import op

from app.db.migrate import apply_incremental

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    apply_incremental(conn, "020-dream-graph.sql")


def downgrade() -> None:
    raise NotImplementedError("memvault migrations are forward-only; restore a backup to go back")
