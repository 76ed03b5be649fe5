"""The dream loop (seed 004): memvault.dream_run, dream_conflict, review_queue, review_threshold and
discovery_inbox (app/background/dream.py).

The statements live in sql/incremental/016-dream.sql; its functions are applied at head.

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-24
"""

from alembic import op

from app.db.migrate import apply_incremental

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    apply_incremental(conn, "016-dream.sql")


def downgrade() -> None:
    raise NotImplementedError("memvault migrations are forward-only; restore a backup to go back")
