"""HTTP shapes of the write track (Pydantic at the edge)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel, field_validator

from app.api.fields import NOT_BLANK, IsoTime, Real

Category = Literal["Decision", "OpenQuestion", "Constraint", "Fact", "Idea", "ActionItem", "Topic", "Provisional",
                   "Preference"]
SourceKind = Literal["user", "assistant", "tool", "import", "web", "note", "resource", "system"]


MAX_METADATA_DEPTH = 16


def _depth(value: Any, level: int = 0) -> int:
    """How deep ``value`` nests (stops counting past the limit)."""
    if level > MAX_METADATA_DEPTH or not isinstance(value, (dict, list)) or not value:
        return level
    items = value.values() if isinstance(value, dict) else value
    return max(_depth(v, level + 1) for v in items)


class MemoryIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    content: str = Field(min_length=1, pattern=NOT_BLANK,
                         description="The memory's text (the original is always kept); not only spaces.")
    category: Category | None = None
    source_kind: SourceKind = Field(default="user", description="Who said it; sets the trust score's tier.")
    confidence: Real = Field(default=0.8, ge=0.0, le=1.0)
    said_at: IsoTime | None = Field(default=None, description="When it was said (ISO-8601 with zone); default now.")
    session_id: str | None = Field(default=None, max_length=200)
    metadata: dict[str, Any] = Field(default_factory=dict, description=f"Kept with the memory; JSON nested at most "
                                     f"{MAX_METADATA_DEPTH} levels.")

    @field_validator("metadata")
    @classmethod
    def _shallow(cls, value: dict[str, Any]) -> dict[str, Any]:
        if _depth(value) > MAX_METADATA_DEPTH:
            raise ValueError(f"metadata is nested too deeply (more than {MAX_METADATA_DEPTH} levels)")
        return value


class MemoryBatchIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    items: list[MemoryIn] = Field(min_length=1)


class MemoryWriteIn(RootModel[MemoryIn | MemoryBatchIn]):
    """The body of POST .../memories: one memory, or a batch of them under ``items``."""


class ItemOut(BaseModel):
    index: int
    decision: Literal["CREATE", "SKIP", "MERGE", "SUPERSEDE", "REJECT"]
    block_id: int | None
    reasons: list[str]
    gate: str | None = None
    rule: str | None = None
    related_block_id: int | None = None


class WriteOut(BaseModel):
    results: list[ItemOut]


class VersionOut(BaseModel):
    version: int
    content: str
    category: str | None
    valid_at: datetime
    invalid_at: datetime | None
    superseded_by: int | None
    recorded_at: datetime
    replaced_at: datetime | None
    retracted_at: datetime | None


class SourceOut(BaseModel):
    turn_id: int | None
    session_id: str | None
    source_kind: str
    said_at: datetime
    decision: str


class MemoryFields(BaseModel):
    """A memory's own fields, in a list (``GET .../memories``) and in full (``MemoryOut``)."""

    id: int
    kind: str
    category: str | None
    content: str
    source_kind: str
    trust_score: float
    confidence: float
    tier: str
    session_id: str | None
    access_count: int
    valid_at: datetime
    invalid_at: datetime | None
    superseded_by: int | None
    recorded_at: datetime
    retracted_at: datetime | None
    version: int


class MemoryOut(MemoryFields):
    normalized: str
    source_turn_ids: list[int]
    last_accessed_at: datetime | None
    history: list[VersionOut]
    sources: list[SourceOut]


class TurnIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: Literal["user", "assistant", "system", "tool"]
    content: str = Field(min_length=1, pattern=NOT_BLANK, description="What was said; not only spaces.")
    said_at: IsoTime | None = Field(default=None, description="Default now.")


class TurnsIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    turns: list[TurnIn] = Field(min_length=1)


class TurnsOut(BaseModel):
    session_id: str
    turn_ids: list[int]
    chunks: list[ItemOut]
    reopened: bool = Field(default=False, description="The session was closed: these turns reopened it, and its "
                                                      "next close extracts them as a new segment.")


class CloseOut(BaseModel):
    session_id: str
    units: list[ItemOut]
    summary_block_id: int | None
    summary_words: int
    thread_map: dict[str, Any]
    segment: int = Field(default=1, description="Which close of the session this was: turns sent after a close "
                                                "reopen it, and the next close extracts only them.")


class FeedbackIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    signal: Literal["+", "-"] = Field(description="'+': the memory helped; '-': it did not (wrong, stale, noise).")
    note: str | None = Field(default=None, max_length=500, description="Why, for the audit log.")

    @property
    def value(self) -> int:
        return 1 if self.signal == "+" else -1


class FeedbackOut(BaseModel):
    block_id: int
    feedback_up: int
    feedback_down: int
