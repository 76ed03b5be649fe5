"""Claude's data export (claude.ai: Settings, Privacy, Export data): ``conversations.json``, a list of
conversations ``{uuid, name, created_at, chat_messages: [{uuid, sender: human | assistant, text, content: [...],
created_at}]}``. Claude keeps only the branch a conversation ended on in the export, so its messages are one line.

A message's text is its ``content`` blocks of type ``text`` (tool use, tool results and thinking blocks are left
out), or its ``text`` field in older exports without ``content``. Attachments' extracted text is not imported.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from app.errors import InvalidInput
from app.importers import Conversation, ImportTurn

ROLES = {"human": "user", "assistant": "assistant"}


def read(data: Any, **_: Any) -> list[Conversation]:
    if not isinstance(data, list):
        raise InvalidInput("a Claude export is a JSON list of conversations",
                           hint="the conversations.json file of the export's zip")
    out = []
    for index, conv in enumerate(data):
        if not isinstance(conv, dict) or not isinstance(conv.get("chat_messages"), list):
            raise InvalidInput(f"Claude conversation {index} has no 'chat_messages'")
        started = _time(conv.get("created_at")) or datetime.now(UTC)
        turns: list[ImportTurn] = []
        last = started
        for m in conv["chat_messages"]:
            role = ROLES.get(m.get("sender")) if isinstance(m, dict) else None
            text = _text(m) if role else ""
            if not text:
                continue
            last = _time(m.get("created_at")) or last
            turns.append(ImportTurn(role, text, last))
        if turns:
            out.append(Conversation(str(conv.get("uuid") or f"conversation-{index}"), conv.get("name") or None,
                                    tuple(turns)))
    return out


def _text(m: dict) -> str:
    blocks = m.get("content")
    if isinstance(blocks, list) and blocks:
        parts = [b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
        return "\n\n".join(p.strip() for p in parts if isinstance(p, str) and p.strip())
    text = m.get("text")
    return text.strip() if isinstance(text, str) else ""


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        t = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=UTC)
