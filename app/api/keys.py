"""``/v1/keys``: API keys for admins. A key for every vault manages every key; a vault-bound admin key manages its
vault's keys. The key itself is in the answer to POST only; lists never show it (nor its hash)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from litestar import Controller, delete, get, post
from pydantic import BaseModel, ConfigDict, Field

from app import keys
from app.auth import Principal
from app.services import Services


class KeyCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    scope: Literal["read", "write", "admin"] = Field(description="admin implies write, write implies read")
    vault: str | None = Field(default=None, min_length=1, max_length=63,
                              description="bind the key to this vault; omitted: every vault")
    name: str = Field(default="", max_length=200, description="a label: who or what uses the key")


class KeyOut(BaseModel):
    id: str
    scope: str
    vault: str | None
    name: str
    created_at: datetime
    created_by: str
    last_used_at: datetime | None
    revoked_at: datetime | None


class KeyCreated(KeyOut):
    key: str = Field(description="the key; shown this once, store it now")


def _out(k: keys.KeyInfo) -> KeyOut:
    return KeyOut(id=k.id, scope=k.scope, vault=k.vault_name, name=k.name, created_at=k.created_at,
                  created_by=k.created_by, last_used_at=k.last_used_at, revoked_at=k.revoked_at)


class KeyController(Controller):
    path = "/v1/keys"
    tags = ["keys"]
    opt = {"scope": "admin", "cross_vault": "filter"}

    @post("/", summary="Create an API key (shown once in the answer)")
    async def create(self, data: KeyCreate, services: Services, principal: Principal) -> KeyCreated:
        key, info = await keys.create_key(services.db, scope=data.scope, vault=data.vault, name=data.name,
                                          by=principal)
        return KeyCreated(**_out(info).model_dump(), key=key)

    @get("/", summary="List API keys (never the keys themselves)")
    async def list(self, services: Services, principal: Principal) -> list[KeyOut]:
        return [_out(k) for k in await keys.list_keys(services.db, by=principal)]

    @delete("/{key_id:str}", summary="Revoke an API key (refused from the next request on)", status_code=200)
    async def revoke(self, key_id: str, services: Services, principal: Principal) -> KeyOut:
        return _out(await keys.revoke_key(services.db, key_id, by=principal))
