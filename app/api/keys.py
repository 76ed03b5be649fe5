"""``/v1/keys``: API keys for admins. A key for every vault manages every key; a vault-bound admin key manages its
vault's keys. The key itself is in the answer to POST only; lists never show it (nor its hash)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from litestar import Controller, delete, get, post
from pydantic import BaseModel, ConfigDict, Field

from app import keys
from app.api.pagination import CURSOR, Page, decode_cursor, limit_param, page
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

    @get("/", summary="List API keys, newest first (never the keys themselves; a cursor page)")
    async def list(self, services: Services, principal: Principal, limit: int = limit_param(100),
                   cursor: str | None = CURSOR) -> Page[KeyOut]:
        after = decode_cursor("keys", cursor)
        found = await keys.list_keys(services.db, by=principal)  # a deployment has a handful of keys
        if after:  # keyset on (created_at descending, id), the order of memvault.api_key_list_v1
            at = datetime.fromisoformat(after[0])
            found = [k for k in found if k.created_at < at or (k.created_at == at and k.id > after[1])]
        return page("keys", [{"k": k} for k in found[:limit + 1]], limit,
                    lambda r: [r["k"].created_at.isoformat(), r["k"].id], lambda r: _out(r["k"]))

    @delete("/{key_id:str}", summary="Revoke an API key (refused from the next request on)", status_code=200)
    async def revoke(self, key_id: str, services: Services, principal: Principal) -> KeyOut:
        revoked = await keys.revoke_key(services.db, key_id, by=principal)
        services.verified_secrets.forget(key_id)  # refused anyway (its row says revoked); nothing kept of it
        return _out(revoked)
