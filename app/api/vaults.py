"""``/v1/vaults``: create, list, inspect, delete (soft) and purge (hard) vaults."""

from __future__ import annotations

from litestar import Controller, delete, get, post
from litestar.params import Parameter

from app import vaults
from app.api.errors import ERROR_RESPONSES
from app.api.pagination import CURSOR, decode_cursor, limit_param, page
from app.api.schemas import Page, VaultCreate, VaultOut
from app.auth import Principal
from app.services import Services

PURGE = Parameter(query="purge", default=False, required=False,
                  description="true: erase for good instead of marking deleted (needs an admin key)")


def _out(v: vaults.Vault) -> VaultOut:
    return VaultOut(id=v.id, name=v.name, graph_name=v.graph_name, created_at=v.created_at)


class VaultController(Controller):
    path = "/v1/vaults"
    tags = ["vaults"]

    # Creating a vault takes a key for every vault with scope write or admin (the guard's default for a route
    # without {vault}); a vault-bound key cannot create vaults.
    @post("/", summary="Create a vault (and its knowledge graph)")
    async def create(self, data: VaultCreate, services: Services) -> VaultOut:
        return _out(await vaults.create_vault(services.db, data.name))

    @get("/", summary="List the vaults the API key may see, by name (a cursor page)", responses=ERROR_RESPONSES,
         opt={"cross_vault": "filter", "standby": True})
    async def list(self, services: Services, principal: Principal, limit: int = limit_param(100),
                   cursor: str | None = CURSOR) -> Page[VaultOut]:
        after = decode_cursor("vaults", cursor)
        if principal.all_vaults:
            found = await vaults.list_vaults(services.db, after=after[0] if after else None, limit=limit + 1)
        else:  # a key bound to one vault sees that one
            assert principal.vault_name is not None
            found = [] if after and after[0] >= principal.vault_name else [
                await vaults.get_vault(services.db, principal.vault_name)]
        return page("vaults", [{"v": v} for v in found], limit, lambda r: [r["v"].name], lambda r: _out(r["v"]))

    @get("/{vault:str}", summary="One vault", opt={"standby": True})
    async def show(self, vault: str, v: vaults.Vault) -> VaultOut:
        return _out(v)

    @delete("/{vault:str}", summary="Delete a vault: soft by default (it refuses use, everything is kept); "
            "?purge=true erases it: memories, history, turns, graph, logs, caches and queued jobs (audit rows stay, "
            "redacted)", opt={"scope": "admin"}, responses=ERROR_RESPONSES)
    async def remove(self, vault: str, services: Services, purge: bool = PURGE) -> None:
        if purge:
            await vaults.purge_vault(services.db, vault)
        else:
            await vaults.soft_delete_vault(services.db, vault)

