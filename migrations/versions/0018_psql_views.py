"""Views for ad-hoc work in psql, under row-level security (security_invoker): memvault.memories (with
provenance), memvault.entity_graph, memvault.memory_health; memvault.facts_as_of_v1 beside them.

The statements live in sql/incremental/018-psql-views.sql; its views use scoring functions,
so those are applied first (unchecked), and again at head.

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-25
"""

from alembic import op

from app.db.migrate import apply_functions_first, apply_incremental

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    apply_functions_first(conn)  # the memory_health view reads weibull_decay_v1
    apply_incremental(conn, "018-psql-views.sql")


def downgrade() -> None:
    raise NotImplementedError("memvault migrations are forward-only; restore a backup to go back")
