"""A vault by id (jobs carry ids; ``app.vaults.get_vault`` looks vaults up by name)."""

from __future__ import annotations

from uuid import UUID

from app.db.connector import Database
from app.db.queries import Q
from app.errors import Gone, NotFound
from app.vaults import Vault


async def vault_by_id(db: Database, vault_id: UUID) -> Vault:
    row = await db.fetchone(Q.vault_by_id, (vault_id,))
    if row is None:
        raise NotFound(f"unknown vault id {vault_id}")
    if row["deleted_at"] is not None:
        raise Gone(f"vault {row['name']!r} was deleted at {row['deleted_at'].isoformat()}")
    return Vault(id=row["id"], name=row["name"], graph_name=row["graph_name"], created_at=row["created_at"])
