"""``/v1/vaults``: create, list, inspect and purge vaults."""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from litestar import Controller, delete, get, post
from pydantic import BaseModel, Field

from app import vaults
from app.api.errors import ERROR_RESPONSES
from app.api.pagination import CURSOR, Page, decode_cursor, limit_param, page
from app.services import Services


class VaultCreate(BaseModel):
    name: str = Field(min_length=1, max_length=63, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$",
                      description="letters, digits, '_', '.', '-'")


class VaultOut(BaseModel):
    id: UUID
    name: str
    graph_name: str
    created_at: datetime


def _out(v: vaults.Vault) -> VaultOut:
    return VaultOut(id=v.id, name=v.name, graph_name=v.graph_name, created_at=v.created_at)


class VaultController(Controller):
    path = "/v1/vaults"
    tags = ["vaults"]

    @post("/", summary="Create a vault (and its knowledge graph)")
    async def create(self, data: VaultCreate, services: Services) -> VaultOut:
        return _out(await vaults.create_vault(services.db, data.name))

    @get("/", summary="List vaults by name (a cursor page)", responses=ERROR_RESPONSES)
    async def list(self, services: Services, limit: int = limit_param(100),
                   cursor: str | None = CURSOR) -> Page[VaultOut]:
        after = decode_cursor("vaults", cursor)
        found = await vaults.list_vaults(services.db, after=after[0] if after else None, limit=limit + 1)
        return page("vaults", [{"v": v} for v in found], limit, lambda r: [r["v"].name], lambda r: _out(r["v"]))

    @get("/{vault:str}", summary="One vault")
    async def show(self, vault: str, services: Services) -> VaultOut:
        return _out(await vaults.get_vault(services.db, vault))

    @delete("/{vault:str}", summary="Purge a vault: its memories, graph and logs (audit entries stay)")
    async def purge(self, vault: str, services: Services) -> None:
        await vaults.drop_vault(services.db, vault)
