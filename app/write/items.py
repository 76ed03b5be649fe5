"""What enters the write track and what it answers: plain frozen dataclasses (Pydantic stays at the edges)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

Kind = Literal["memory", "chunk", "unit", "summary", "thread"]
Decision = Literal["CREATE", "SKIP", "MERGE", "SUPERSEDE", "REJECT"]
CATEGORIES = ("Decision", "OpenQuestion", "Constraint", "Fact", "Idea", "ActionItem", "Topic", "Provisional",
              "Preference")


def embedding_text(context: str | None, normalized: str) -> str:
    """The text a block's dense vector is made from: its context line (``metadata.context``), then the normalized
    memory. The one definition: the write track embeds it, the second rail and ``memvault reembed`` re-embed it."""
    return f"{context}\n{normalized}" if context else normalized


@dataclass(frozen=True, slots=True)
class WriteItem:
    """One candidate memory. ``said_at`` is when it was said (its valid time starts then).

    ``context`` is what was said just before (for a turn's first chunk: the end of the previous turn). It is
    embedded and indexed with the memory, so "They were scared but we reassured them" is found by a question
    about the accident it answers, but it is not part of the memory's content (kept in ``metadata.context``)."""

    content: str
    said_at: datetime
    source_kind: str = "user"
    kind: Kind = "memory"
    category: str | None = None
    confidence: float = 0.8
    trust_score: float | None = None
    session_id: str | None = None
    turn_ids: tuple[int, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)
    context: str | None = None

    def embedding_text(self, normalized: str) -> str:
        """The text the embedder reads (:func:`embedding_text`)."""
        return embedding_text(self.context, normalized)


@dataclass(frozen=True, slots=True)
class ItemResult:
    """The write track's answer for one item: its decision, the block it landed in, and why."""

    index: int
    decision: Decision
    block_id: int | None
    reasons: tuple[str, ...]
    gate: str | None = None
    rule: str | None = None
    related_block_id: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"index": self.index, "decision": self.decision, "block_id": self.block_id,
                "reasons": list(self.reasons), "gate": self.gate, "rule": self.rule,
                "related_block_id": self.related_block_id}
