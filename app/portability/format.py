"""The export format's name, version and line kinds; detection of a memvault export by its first line."""

from __future__ import annotations

import json
from typing import Any

FORMAT = "memvault-export"
VERSION = 1
# Line kinds after the header, in the order an export writes them (an import accepts any order).
KINDS = ("session", "turn", "block", "entity", "alias", "triple", "lexeme_stats_state")


def is_memvault_export(first_line: str | bytes) -> bool:
    """True when ``first_line`` is the header line of a memvault export (of any version)."""
    header = _json(first_line)
    return isinstance(header, dict) and header.get("type") == "header" and header.get("format") == FORMAT


def _json(line: str | bytes) -> Any:
    try:
        return json.loads(line)
    except (ValueError, UnicodeDecodeError):
        return None
