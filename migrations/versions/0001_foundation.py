"""Foundation: vaults, sessions, turns, bitemporal blocks, entities, triples, logs, RLS, AGE per vault.

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

from alembic import op

from app.db.migrate import apply_incremental

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    apply_incremental(conn, "001-foundation.sql")


def downgrade() -> None:
    raise NotImplementedError("memvault migrations are forward-only; restore a backup to go back")
