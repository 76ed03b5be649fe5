"""Access and audit: API keys the service checks (argon2 hashes, scopes, one vault or all), audit_log rows with
actor, before and after written by triggers on every mutation, audit_log append-only for the service's role, and
row-level security on the vault table.

The statements live in sql/incremental/017-access.sql; its functions are applied at head.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-25
"""

from alembic import op

from app.db.migrate import apply_incremental

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    apply_incremental(conn, "017-access.sql")


def downgrade() -> None:
    raise NotImplementedError("memvault migrations are forward-only; restore a backup to go back")
