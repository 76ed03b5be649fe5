"""Write track: dedup candidates, batched inserts, MERGE / SUPERSEDE / retract, sources, audit, history.

The functions live in sql/idempotent/040-write.sql; this revision re-applies the idempotent files.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22
"""

from alembic import op

from app.db.migrate import apply_idempotent

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    apply_idempotent(op.get_bind())


def downgrade() -> None:
    raise NotImplementedError("memvault migrations are forward-only; restore a backup to go back")
