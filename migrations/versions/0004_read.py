"""Read track: intent archetypes (QueryClassify), fast search, the 11 scoring stages, cascade recall, logs.

The tables live in sql/incremental/003-read.sql; the functions in sql/idempotent/060-read.sql and 07x-*.sql,
applied at head (app/db/migrate.py).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22
"""

from alembic import op

from app.db.migrate import apply_incremental

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    apply_incremental(conn, "003-read.sql")


def downgrade() -> None:
    raise NotImplementedError("memvault migrations are forward-only; restore a backup to go back")
