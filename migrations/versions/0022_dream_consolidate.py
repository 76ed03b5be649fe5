"""The dream (seed 004): dream_conflict accepts the 'value' pairs of the bounded contradiction scan, and the
consolidate stage's normalization gets its reference data (predicate_alias: other names of the canonical predicates).

The statements live in sql/incremental/022-dream-consolidate.sql; its functions are applied at head.

Revision ID: 0022
Revises: 0020
Create Date: 2026-11-25
"""

from alembic import op

from app.db.migrate import apply_incremental

revision = "0022"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    apply_incremental(conn, "022-dream-consolidate.sql")


def downgrade() -> None:
    raise NotImplementedError("memvault migrations are forward-only; restore a backup to go back")
