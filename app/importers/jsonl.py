"""Plain JSON lines of turns, one per line: ``{"session_id": "s1", "role": "user", "content": "...",
"said_at": "2024-05-01T09:30:00Z"}``. ``session_id`` defaults to ``default``; ``said_at`` (or ``timestamp`` /
``created_at``, ISO 8601 or epoch seconds) defaults to the time before it in the same session, and to the file's
modification time for a session's first line, so a re-run gives the same times. Sessions keep the order their
lines come in; a session's lines need not be adjacent.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError

from app.errors import InvalidInput, field_problems
from app.importers import Conversation, ImportTurn


class TurnLine(BaseModel):
    model_config = ConfigDict(extra="ignore")

    session_id: str = Field(default="default", min_length=1, max_length=180)
    role: Literal["user", "assistant", "system", "tool"]
    content: str = Field(min_length=1)
    said_at: datetime | None = Field(default=None, validation_alias=AliasChoices("said_at", "timestamp",
                                                                                  "created_at"))


def read(raw: bytes, *, default_time: datetime, **_: Any) -> list[Conversation]:
    sessions: dict[str, list[ImportTurn]] = {}
    for n, line in enumerate(raw.decode("utf-8", errors="replace").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            t = TurnLine.model_validate(json.loads(line))
        except ValueError as exc:
            problem = field_problems(exc, "line") if isinstance(exc, ValidationError) else f"not JSON ({exc})"
            raise InvalidInput(f"line {n}: {problem}", hint='each line: {"session_id": ..., "role": "user" | '
                               '"assistant", "content": ..., "said_at": ISO 8601}') from exc
        turns = sessions.setdefault(t.session_id, [])
        said = t.said_at or (turns[-1].said_at if turns else default_time)
        turns.append(ImportTurn(t.role, t.content, said if said.tzinfo else said.replace(tzinfo=UTC)))
    return [Conversation(sid, None, tuple(turns)) for sid, turns in sessions.items()]
