"""Drop insert_triples_v1: insert_triples_v2 replaced it (each fact once in the graph; see the file).

The statements live in sql/incremental/027-drop-insert-triples-v1.sql.

Revision ID: 0027
Revises: 0026
Create Date: 2026-11-27
"""

from alembic import op

from app.db.migrate import apply_incremental

revision = "0027"
down_revision = "0026"
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    apply_incremental(conn, "027-drop-insert-triples-v1.sql")


def downgrade() -> None:
    raise NotImplementedError("memvault migrations are forward-only; restore a backup to go back")
