"""Indexes behind the foreign keys that had none (block.superseded_by, entity_alias.entity_id,
api_key.vault_id): dropping a large vault deleted row by row with a table scan each.

The statements live in sql/incremental/007-fk-indexes.sql; its functions are applied at head.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-22
"""

from alembic import op

from app.db.migrate import apply_incremental

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    apply_incremental(conn, "007-fk-indexes.sql")


def downgrade() -> None:
    raise NotImplementedError("memvault migrations are forward-only; restore a backup to go back")
