"""Write track: dedup candidates, batched inserts, MERGE / SUPERSEDE / retract, sources, audit, history.

The functions live in sql/idempotent/040-write.sql; applied at head (app/db/migrate.py).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22
"""


revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass  # its functions: sql/idempotent/, applied at head


def downgrade() -> None:
    raise NotImplementedError("memvault migrations are forward-only; restore a backup to go back")
