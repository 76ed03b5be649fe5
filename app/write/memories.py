"""Reading one memory with its history and sources; retracting it (DELETE keeps the record); purging it
(DELETE ?purge=true erases it and every copy of what it said: sql/idempotent/095-erasure.sql)."""

from __future__ import annotations

import json

from app.db.queries import Q
from app.errors import NotFound
from app.services import Services
from app.vaults import Vault


async def get_memory(services: Services, vault: Vault, block_id: int) -> dict:
    db = services.db
    row = await db.fetchone(
        Q.block_with_usage, (vault.id, block_id), vault_id=vault.id)
    if row is None:
        raise NotFound(f"no memory {block_id} in vault {vault.name!r}")
    row["history"] = await db.fetchall(Q.block_versions,
                                       (vault.id, block_id, row["version"]), vault_id=vault.id)
    row["sources"] = await db.fetchall(
        Q.block_sources, (vault.id, block_id),
        vault_id=vault.id)
    return row


async def retract_memory(services: Services, vault: Vault, block_id: int) -> None:
    async with services.db.transaction(vault.id) as conn:
        cur = await conn.execute(Q.retract_block, (vault.id, block_id))
        row = await cur.fetchone()
        if row is None or row["id"] is None:
            raise NotFound(f"no current memory {block_id} in vault {vault.name!r}",
                           hint="it does not exist or was already deleted")
        entry = {"action": "write.retract", "block_id": block_id}  # actor: the transaction's (memvault.actor)
        await conn.execute(Q.audit, (vault.id, json.dumps([entry])))


async def feedback_memory(services: Services, vault: Vault, block_id: int, signal: int, *, actor: str | None = None,
                          note: str | None = None) -> dict:
    """+1 / -1 on a memory's feedback counts (memvault.block_usage), audited in the same transaction (actor: the
    request's key by default)."""
    from app.db.connector import current_actor

    return await services.db.fetchone(Q.block_feedback,
                                      (vault.id, block_id, signal, actor or current_actor.get() or "api", note),
                                      vault_id=vault.id)


async def purge_memory(services: Services, vault: Vault, block_id: int) -> dict:
    """Erase a memory, retracted or not, with the turns it was said in and everything derived from them."""
    row = await services.db.fetchone(Q.purge_block, (vault.id, block_id))
    if row is None or row["purged"] is None:
        raise NotFound(f"no memory {block_id} in vault {vault.name!r}", hint="it does not exist or was purged")
    return row["purged"]
