"""${message}

Revision ID: ${up_revision}
Revises: ${down_revision | comma,n}
Create Date: ${create_date}
"""

from alembic import op

from app.db.migrate import apply_idempotent, apply_incremental

revision = ${repr(up_revision)}
down_revision = ${repr(down_revision)}
branch_labels = ${repr(branch_labels)}
depends_on = ${repr(depends_on)}


def upgrade() -> None:
    conn = op.get_bind()
    ${upgrades if upgrades else "apply_incremental(conn, 'NNN-slug.sql')"}
    apply_idempotent(conn)


def downgrade() -> None:
    raise NotImplementedError("memvault migrations are forward-only; restore a backup to go back")
