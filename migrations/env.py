"""Alembic environment: online migrations only, version table in the memvault schema."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

from app.db import tables
from app.db.migrate import VERSION_TABLE_SCHEMA, sqlalchemy_url

config = context.config


def _url() -> str:
    url = config.get_main_option("sqlalchemy.url")
    if url:
        return url
    from app.db.provision import ensure_server
    from app.settings import get_settings

    return sqlalchemy_url(ensure_server(get_settings()).url)


def run_migrations_online() -> None:
    engine = create_engine(_url())
    with engine.connect() as connection:
        # The version table lives in the memvault schema, which must exist before Alembic looks for it.
        connection.exec_driver_sql(f"CREATE SCHEMA IF NOT EXISTS {VERSION_TABLE_SCHEMA}")
        connection.commit()
        context.configure(
            connection=connection,
            target_metadata=tables.metadata,
            version_table_schema=VERSION_TABLE_SCHEMA,
            include_schemas=True,
            include_name=tables.include_name,
            include_object=tables.include_object,
            compare_type=tables.compare_type,
            transaction_per_migration=True,
        )
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    raise SystemExit("memvault migrations run online only: the SQL files need a live server")
run_migrations_online()
