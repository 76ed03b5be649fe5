"""Which format a file is in, from its content (not its name): the first JSON value's keys, or the first line's."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from app.errors import InvalidInput

FORMATS = ("chatgpt", "claude", "locomo", "longmemeval", "jsonl", "memvault")


def read_bytes(path: Path) -> bytes:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}", hint="pass the path of an export file") from exc
    return gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw


def detect(raw: bytes, name: str = "the file") -> str:
    first_line = raw.lstrip()[:1_000_000].split(b"\n", 1)[0]
    head = _json(first_line)
    if isinstance(head, dict):
        if head.get("type") == "header" and head.get("format") == "memvault-export":
            return "memvault"
        if "content" in head and ("role" in head or "sender" in head):
            return "jsonl"
    data = _json(raw)
    items = data if isinstance(data, list) else [data] if isinstance(data, dict) else []
    first = next((x for x in items if isinstance(x, dict)), None)
    if first is not None:
        if "mapping" in first:
            return "chatgpt"
        if "chat_messages" in first:
            return "claude"
        if "haystack_sessions" in first:
            return "longmemeval"
        if "conversation" in first and isinstance(first["conversation"], dict):
            return "locomo"
    raise InvalidInput(f"{name}: not a format memvault imports",
                       hint="ChatGPT or Claude conversations.json, LoCoMo, LongMemEval, JSON lines of turns "
                            "({\"session_id\", \"role\", \"content\", \"said_at\"}) or a memvault export; "
                            "name it with --format if it is one of them")


def _json(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
