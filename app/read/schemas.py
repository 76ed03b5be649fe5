"""HTTP shapes of the read track (Pydantic at the edge), light to import: the API, MCP and the Python client
(``app.client``) share them."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from app.api.fields import IsoTime
from pydantic import BaseModel, ConfigDict, Field

MAX_QUERY_CHARS = 4000


class RecallIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS, description="What to recall.")
    format: Literal["text", "json", "cards"] = "cards"
    token_budget: int | None = Field(default=None, ge=1, le=200_000, description="cl100k tokens; default 2000.")
    k: int | None = Field(default=None, ge=1, le=200, description="At most this many cards; default 10.")
    as_of: IsoTime | None = Field(default=None, description="Valid time: what was true then (default now).")
    known_at: IsoTime | None = Field(default=None, description="Transaction time: what the vault believed then.")
    thinking: Literal["fast", "slow"] | None = Field(default=None, description="Override the intent's choice.")
    session_id: str | None = Field(default=None, max_length=200)
    funnel: bool | None = Field(default=None, description="Switch seed 003's selection funnel on or off.")


class RecallOut(BaseModel):
    cards: list[dict[str, Any]]
    cascade_cards: list[dict[str, Any]]
    meta: dict[str, Any]
    text: str | None = None


class RecallStatsOut(BaseModel):
    vault: str = Field(description="The vault these counts are of.")
    counters: dict[str, int] = Field(description="This vault's read-track counts by name (recall.total, "
                                     "rerank.skip.<reason>, rerank.blend, prefetch.hit, ...), since the API "
                                     "process serving the request started.")
    breakers: dict[str, dict[str, Any]] = Field(description="The read track's breakers (shared by every vault: "
                                                "a breaker guards a backend): state and counts.")
