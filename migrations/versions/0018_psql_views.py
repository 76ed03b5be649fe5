"""Views for ad-hoc work in psql, under row-level security (security_invoker): memvault.memories (with
provenance), memvault.entity_graph, memvault.memory_health; memvault.facts_as_of_v1 beside them.

The statements live in sql/incremental/018-psql-views.sql; the two scoring functions its memory_health view reads
come first, frozen in sql/incremental/018-psql-view-functions.sql (head replaces them with the current bodies). No
idempotent file is applied mid-chain: those files name objects of later revisions (the service role of 0023).

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-25
"""

from alembic import op

from app.db.migrate import apply_incremental

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    apply_incremental(conn, "018-psql-view-functions.sql")  # the memory_health view reads weibull_decay_v1
    apply_incremental(conn, "018-psql-views.sql")


def downgrade() -> None:
    raise NotImplementedError("memvault migrations are forward-only; restore a backup to go back")
