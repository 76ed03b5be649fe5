"""The role the API and the worker log in as: memvault_service, not a superuser, no BYPASSRLS, owner of nothing,
member of memvault_app; its grants on Procrastinate's queue. What it may do across vaults is a list of SECURITY
DEFINER functions (sql/idempotent/990-service-role.sql, applied at head).

The statements live in sql/incremental/023-service-role.sql.

Revision ID: 0023
Revises: 0022
Create Date: 2026-11-25
"""

from alembic import op

from app.db.migrate import apply_incremental

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    apply_incremental(conn, "023-service-role.sql")


def downgrade() -> None:
    raise NotImplementedError("memvault migrations are forward-only; restore a backup to go back")
