"""API key administration: create (the key is shown once), list, revoke. Used by ``memvault key`` and
``/v1/keys``; verification is ``app.auth``."""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from uuid import UUID

from app.auth import SCOPES, Principal, Scope, authenticate, new_key
from app.db.connector import Database
from app.db.queries import Q
from app.errors import InvalidInput, NotFound, Unauthorized
from app.vaults import get_vault


@dataclass(frozen=True, slots=True)
class KeyInfo:
    id: str
    scope: Scope
    vault_id: UUID | None
    vault_name: str | None
    name: str
    created_at: datetime
    created_by: str
    last_used_at: datetime | None
    revoked_at: datetime | None


def _info(row: dict) -> KeyInfo:
    return KeyInfo(**row)


async def create_key(db: Database, *, scope: str, vault: str | None = None, name: str = "",
                     by: Principal | None = None) -> tuple[str, KeyInfo]:
    """A new key (the plain key, returned once, and its record). ``by``: the key creating it, which may hand out
    keys only for what it may do itself (a vault-bound admin key: keys for its vault)."""
    if scope not in SCOPES:
        raise InvalidInput(f"unknown scope {scope!r}", hint="one of " + ", ".join(SCOPES))
    if len(name) > 200:
        raise InvalidInput("key name longer than 200 characters")
    if by is not None:
        by.require(vault, "admin")
    vault_id = (await get_vault(db, vault)).id if vault is not None else None
    key_id, key, key_hash = new_key()
    row = await db.fetchone(Q.api_key_create,
                            (key_id, key_hash, scope, vault_id, name))
    assert row is not None
    return key, _info(row)


async def list_keys(db: Database, *, vault: str | None = None, by: Principal | None = None) -> list[KeyInfo]:
    """Every key (``vault``: only that vault's); a vault-bound admin key sees its vault's keys only."""
    if by is not None and not by.all_vaults:
        vault = by.vault_name if vault is None else vault
        by.require(vault, "admin")
    if vault is None:
        rows = await db.fetchall(Q.api_key_list_all)
    else:
        rows = await db.fetchall(Q.api_key_list, ((await get_vault(db, vault)).id,))
    return [_info(r) for r in rows]


async def revoke_key(db: Database, key_id: str, *, by: Principal | None = None) -> KeyInfo:
    found = await db.fetchone(Q.api_key_by_id, (key_id,))
    if found is None or (by is not None and not by.all_vaults and found["vault_id"] != by.vault_id):
        raise NotFound(f"no API key {key_id!r}", hint="list them: GET /v1/keys or `memvault key list`")
    if by is not None:
        by.require(found["vault_name"], "admin")
    row = await db.fetchone(Q.api_key_revoke, (key_id,))
    assert row is not None
    return _info(row)


async def active_key_count(db: Database) -> int:
    row = await db.fetchone(Q.api_key_active_count)
    return int(row["n"]) if row else 0


def local_key_paths(settings) -> tuple[Path, Path]:
    """Where `serve --local-key` may keep the admin key of the database it serves: the plain file the README
    shows (``<data dir>/api_key``), or, when that one holds another database's key, a file named for this
    database (``api_key.<name>``): serving a second database never overwrites the first one's key."""
    import re
    from urllib.parse import urlsplit

    base = settings.data_dir.expanduser() / settings.local_key_file
    name = urlsplit(settings.database_url).path.lstrip("/") if settings.database_url else settings.db_name
    return base, base.with_name(f"{base.name}.{re.sub(r'[^A-Za-z0-9_.-]', '_', name or 'postgres')}")


async def ensure_local_key(db: Database, paths: tuple[Path, Path]) -> tuple[str, bool, Path]:
    """The local admin key of ``make serve``: the one stored in either of ``paths`` (mode 0600) if it works in this
    database, else a new one, written to the plain path if it is free, else to this database's own. Returns (key,
    created, path)."""
    for path in paths:
        if path.is_file():
            key = path.read_text(encoding="utf-8").strip()
            try:
                principal = await authenticate(db, key)
            except Unauthorized:
                continue
            if principal.scope == "admin" and principal.all_vaults:
                return key, False, path
    path = paths[0] if not paths[0].exists() else paths[1]
    key, _ = await create_key(db, scope="admin", name=f"local admin key ({path})")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path.with_suffix(".tmp"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(key + "\n")
    os.chmod(path.with_suffix(".tmp"), 0o600)
    os.replace(path.with_suffix(".tmp"), path)
    return key, True, path

