"""The database layer, the only boundary to PostgreSQL: ``connector`` (the async pool, vault-scoped transactions,
type adapters, the one translation of driver errors; ``sync_connection`` for the CLI's synchronous runs),
``queries`` (every statement Python sends, by name, from ``sql/queries.sql``), ``migrate`` and ``resources``
(Alembic revisions, run-once files, the idempotent functions applied at head; the files as package data), and
the embedded server (``cluster``, ``provision``, ``rootfs``), ``ann_index`` (per-vault HNSW indexes),
``commands`` (``memvault db ...``). New SQL goes into ``sql/``: a versioned function in ``sql/idempotent/``, or
a named statement in ``sql/queries.sql``; never a string in Python.
"""
