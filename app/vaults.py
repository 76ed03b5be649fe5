"""Vaults: one user's memory space, with its own AGE graph. Looked up by name on every request."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from app.db.connector import Database
import re

from app.db.queries import Q
from app.errors import Conflict, Gone, InvalidInput, NotFound

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")


@dataclass(frozen=True, slots=True)
class Vault:
    id: UUID
    name: str
    graph_name: str
    created_at: datetime
    deleted_at: datetime | None = None


def _vault(row: dict) -> Vault:
    return Vault(id=row["id"], name=row["name"], graph_name=row["graph_name"], created_at=row["created_at"],
                 deleted_at=row.get("deleted_at"))


def check_name(name: str) -> str:
    if not _NAME.fullmatch(name):
        raise InvalidInput(f"invalid vault name {name[:80]!r}",
                           hint="1-63 characters: letters, digits, '_', '.', '-'; starting with a letter or digit")
    return name


async def create_vault(db: Database, name: str) -> Vault:
    check_name(name)
    try:
        row = await db.fetchone(Q.create_vault, (name,))
    except Conflict as exc:
        raise Conflict(f"vault {name!r} already exists", hint="choose another name or use the existing vault (a "
                       "deleted vault keeps its name until it is purged: DELETE /v1/vaults/NAME?purge=true)") from exc
    assert row is not None
    return _vault(row)


async def get_vault(db: Database, name: str, *, deleted: bool = False) -> Vault:
    """The vault of this name; a soft-deleted one is refused (410) unless ``deleted`` (purge, restore)."""
    row = await db.fetchone(Q.vault_by_name, (name,))
    if row is None:
        raise NotFound(f"unknown vault {name!r}", hint="create it first: POST /v1/vaults {\"name\": ...}")
    vault = _vault(row)
    if vault.deleted_at is not None and not deleted:
        raise Gone(f"vault {name!r} was deleted at {vault.deleted_at.isoformat()}",
                   hint="it refuses use; purge it to erase it (DELETE /v1/vaults/NAME?purge=true, or "
                        "`memvault purge --vault NAME`), which also frees the name")
    return vault


async def get_or_create_vault(db: Database, name: str) -> Vault:
    """The vault of this name, created if it does not exist yet (benchmarks that keep a vault between runs)."""
    try:
        return await get_vault(db, name)
    except NotFound:
        return await create_vault(db, name)


async def list_vaults(db: Database, *, after: str | None = None, limit: int | None = None) -> list[Vault]:
    """By name, those in use (soft-deleted ones are left out); ``after`` / ``limit``: one page of them (keyset on
    the name)."""
    rows = await db.fetchall(Q.list_vaults, {"after": after, "limit": limit})
    return [_vault(r) for r in rows]


async def soft_delete_vault(db: Database, name: str) -> Vault:
    """Mark the vault deleted: it refuses use from now on and keeps everything (``purge_vault`` erases it)."""
    vault = await get_vault(db, name)
    await db.fetchone(Q.soft_delete_vault, (vault.id,))
    return vault


async def purge_vault(db: Database, name: str) -> dict:
    """Erase the vault (deleted or not): its graph, every row keyed by it, its queued jobs; its audit rows stay,
    redacted (sql/idempotent/095-erasure.sql). Then its own HNSW index, if it had one (concurrently, after the
    purge has committed: dropping it inside would lock the block table for every vault meanwhile)."""
    from app.db.ann_index import drop_index

    vault = await get_vault(db, name, deleted=True)
    row = await db.fetchone(Q.purge_vault, (vault.id,))
    await drop_index(db, vault.id)
    return (row or {}).get("purged") or {}


async def drop_vault(db: Database, name: str) -> None:
    """Erase the vault and everything in it (benchmarks and tests that start over): ``purge_vault``."""
    await purge_vault(db, name)
