"""An agent-facing process (``memvault mcp`` on stdio, a hook doing its work in-process) acting as its API key."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.auth import authenticate
from app.db.connector import act_as
from app.errors import NotFound, Unauthorized
from app.vaults import create_vault, get_vault

if TYPE_CHECKING:
    from app.services import Services


async def open_vault_as(services: Services, key: str | None, vault: str | None, scope: str):
    """The key's principal (the actor of everything after), and ``vault`` opened for ``scope`` (created when
    missing, which takes a key for every vault); None when no vault is named and the key is not bound to one."""
    if not key:
        raise Unauthorized("an API key is required", hint="set MEMVAULT_API_KEY or pass --key; create one with "
                                                         "`memvault key create --scope write`")
    principal = await authenticate(services.db, key, services.verified_secrets)
    act_as(principal.actor)
    vault = vault or principal.vault_name
    if vault is None:
        return principal, None
    principal.require(vault, scope)
    try:
        return principal, await get_vault(services.db, vault)
    except NotFound:
        principal.require(None, "write")
        return principal, await create_vault(services.db, vault)
