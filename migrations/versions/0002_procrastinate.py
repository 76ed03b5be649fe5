"""Procrastinate's job queue schema (the version pinned in pyproject).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""

from alembic import op
from procrastinate.schema import SchemaManager

from app.db.migrate import run_sql

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    run_sql(conn, SchemaManager.get_schema())


def downgrade() -> None:
    raise NotImplementedError("memvault migrations are forward-only; restore a backup to go back")
