"""The guard's training and evaluation corpora, as files: JSON lines of labeled texts (attacks, hard benign) and
the turns of LoCoMo or LongMemEval conversations (the ordinary chat a gate must let through).

Production code: ``memvault guard fit`` (app/safety/training.py) reads them, and so does ``memvault bench guard``
(app/bench/guard.py), which imports them from here: production code never imports the benchmarks.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from app.errors import ConfigError


def _read_json(path: Path) -> Any:
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw.decode("utf-8"))


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        raise ConfigError(f"no such file: {path}")
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ConfigError(f"{path}:{n}: not JSON ({exc.msg})") from exc
    return rows


def chat_turns(path: Path) -> list[str]:
    """All turn texts of a LoCoMo or LongMemEval file, in file order."""
    return [text for _, text in chat_turns_grouped(path)]


def chat_turns_grouped(path: Path) -> list[tuple[str, str]]:
    """(conversation, text) of every turn of a LoCoMo or LongMemEval file, in file order; the conversation is the
    LoCoMo sample or the LongMemEval question whose haystack holds the turn (the unit of a cross-validation fold)."""
    if not path.exists():
        raise ConfigError(f"no such file: {path}")
    data = _read_json(path)
    if not isinstance(data, list) or not data or not isinstance(data[0], dict):
        raise ConfigError(f"{path}: expected a JSON list of LoCoMo conversations or LongMemEval questions")
    first = data[0]
    out: list[tuple[str, str]] = []
    if "conversation" in first:
        for n, conv in enumerate(data):
            group = str(conv.get("sample_id", n))
            for key, value in conv["conversation"].items():
                if key.startswith("session_") and isinstance(value, list):
                    out.extend((group, t["text"]) for t in value if isinstance(t, dict) and t.get("text"))
    elif "haystack_sessions" in first:
        for n, item in enumerate(data):
            group = str(item.get("question_id", n))
            for session in item["haystack_sessions"]:
                out.extend((group, t["content"]) for t in session if isinstance(t, dict) and t.get("content"))
    else:
        raise ConfigError(f"{path}: neither LoCoMo ('conversation') nor LongMemEval ('haystack_sessions')")
    return out
