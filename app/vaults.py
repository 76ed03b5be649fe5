"""Vaults: one user's memory space, with its own AGE graph. Looked up by name on every request."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from app.db.connector import Database
from app.errors import Conflict, InvalidInput, NotFound

import re

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")


@dataclass(frozen=True, slots=True)
class Vault:
    id: UUID
    name: str
    graph_name: str
    created_at: datetime


def _vault(row: dict) -> Vault:
    return Vault(id=row["id"], name=row["name"], graph_name=row["graph_name"], created_at=row["created_at"])


async def create_vault(db: Database, name: str) -> Vault:
    if not _NAME.match(name):
        raise InvalidInput(f"invalid vault name {name!r}",
                           hint="1-63 characters: letters, digits, '_', '.', '-'; starting with a letter or digit")
    try:
        row = await db.fetchone("SELECT * FROM memvault.create_vault_v1(%s)", (name,))
    except Conflict as exc:
        raise Conflict(f"vault {name!r} already exists", hint="choose another name or use the existing vault") from exc
    assert row is not None
    return _vault(row)


async def get_vault(db: Database, name: str) -> Vault:
    row = await db.fetchone("SELECT * FROM memvault.vault WHERE name = %s", (name,))
    if row is None:
        raise NotFound(f"unknown vault {name!r}", hint="create it first: POST /v1/vaults {\"name\": ...}")
    return _vault(row)


async def get_or_create_vault(db: Database, name: str) -> Vault:
    """The vault of this name, created if it does not exist yet (benchmarks that keep a vault between runs)."""
    try:
        return await get_vault(db, name)
    except NotFound:
        return await create_vault(db, name)


async def list_vaults(db: Database, *, after: str | None = None, limit: int | None = None) -> list[Vault]:
    """By name; ``after`` / ``limit``: one page of them (keyset on the name)."""
    rows = await db.fetchall("SELECT * FROM memvault.vault WHERE %(after)s::text IS NULL OR name > %(after)s "
                             "ORDER BY name LIMIT %(limit)s", {"after": after, "limit": limit})
    return [_vault(r) for r in rows]


async def drop_vault(db: Database, name: str) -> None:
    """Drop the vault and everything in it; then its own HNSW index, if it had one (concurrently, after the
    deletion has committed: dropping it inside would lock the block table for every vault meanwhile)."""
    from app.db.ann_index import drop_index

    vault = await get_vault(db, name)
    await db.fetchone("SELECT memvault.drop_vault_v1(%s) AS dropped", (vault.id,))
    await drop_index(db, vault.id)
