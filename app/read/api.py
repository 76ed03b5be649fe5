"""``POST /v1/vaults/{vault}/recall``: a thin controller, one service call (``recall``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from litestar import Controller, get, post
from pydantic import BaseModel, ConfigDict, Field

from app.read.config import RecallOptions
from app.read.recall import MAX_QUERY_CHARS, recall
from app.services import Services
from app.vaults import get_vault


class RecallIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS, description="What to recall.")
    format: Literal["text", "json", "cards"] = "cards"
    token_budget: int | None = Field(default=None, ge=1, le=200_000, description="cl100k tokens; default 2000.")
    k: int | None = Field(default=None, ge=1, le=200, description="At most this many cards; default 10.")
    as_of: datetime | None = Field(default=None, description="Valid time: what was true then (default now).")
    known_at: datetime | None = Field(default=None, description="Transaction time: what the vault believed then.")
    thinking: Literal["fast", "slow"] | None = Field(default=None, description="Override the intent's choice.")
    session_id: str | None = Field(default=None, max_length=200)
    funnel: bool | None = Field(default=None, description="Switch seed 003's selection funnel on or off.")


class RecallOut(BaseModel):
    cards: list[dict[str, Any]]
    cascade_cards: list[dict[str, Any]]
    meta: dict[str, Any]
    text: str | None = None


class RecallController(Controller):
    path = "/v1/vaults/{vault:str}/recall"
    tags = ["recall"]

    @post("/", summary="Recall memories for a query: cards, cascade_cards and meta", status_code=200,
          opt={"scope": "read", "standby": True})
    async def recall(self, vault: str, data: RecallIn, services: Services) -> RecallOut:
        result = await recall(services, await get_vault(services.db, vault), data.query, RecallOptions(
            format=data.format, token_budget=data.token_budget, as_of=data.as_of, known_at=data.known_at,
            thinking=data.thinking, k=data.k, session_id=data.session_id, funnel=data.funnel))
        return RecallOut(**result.render(), meta=result.meta)

    @get("/stats", summary="Read-track counters: gate skips, breaker trips, blends, prefetch hits and misses")
    async def stats(self, vault: str, services: Services) -> dict[str, Any]:
        from app.read.stats import snapshot

        await get_vault(services.db, vault)
        return snapshot()
