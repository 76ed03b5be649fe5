"""Cursor pagination for every list route: ``?limit=N&cursor=...`` in, ``{"items": [...], "next_cursor": ...}`` out.

The cursor is opaque to clients: the last row's sort key, as URL-safe base64 of JSON, tagged with the route's name
so a cursor of one list is refused by another, and its key type-checked (``KEYS``) before it reaches SQL. Keyset
pagination (each SQL list function takes the key and returns the rows after it) stays stable while rows are added,
and costs the same on page 1 and page 1000.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, TypeVar

from litestar.params import Parameter

from app.api.schemas import Page  # noqa: F401  (list routes import it from here too)
from app.errors import BadRequest

T = TypeVar("T")
MAX_LIMIT = 500


def limit_param(default: int):
    return Parameter(default=default, ge=1, le=MAX_LIMIT, description=f"Items per page (1-{MAX_LIMIT}).")


CURSOR = Parameter(required=False, description="`next_cursor` of the previous page; absent: the first page.")


def encode_cursor(kind: str, key: Sequence[Any]) -> str:
    raw = json.dumps([kind, list(key)], separators=(",", ":"), default=str).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


BIGINT = 2**63 - 1


def _int(value: Any) -> int:
    if type(value) is not int or not -BIGINT <= value <= BIGINT:  # bool is an int subclass: refused too
        raise ValueError(value)
    return value


def _text(value: Any) -> str:
    if not isinstance(value, str) or not 0 < len(value) <= 1000 or "\x00" in value:
        raise ValueError(value)
    return value


def _time(value: Any) -> str:
    """An ISO-8601 time with a zone, kept as the text the list's SQL function casts."""
    if datetime.fromisoformat(_text(value)).tzinfo is None:
        raise ValueError(value)
    return value


# The sort key of each list, field by field: what a cursor of that list must carry, checked before any query.
KEYS: dict[str, tuple[Callable[[Any], Any], ...]] = {
    "vaults": (_text,), "keys": (_time, _text), "memories": (_int,), "sessions": (_time, _text),
    "turns": (_int,), "entities": (_int, _int),
}


def decode_cursor(kind: str, cursor: str | None) -> list[Any] | None:
    """The key a cursor carries (None: first page). A cursor that is not one this list issued (another list's,
    a truncated one, one whose key has the wrong types) is a 400 naming the cursor: it never reaches SQL."""
    if not cursor:
        return None
    checks = KEYS[kind]
    try:
        tag, key = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        if tag != kind or not isinstance(key, list) or len(key) != len(checks):
            raise ValueError(tag)
        return [check(value) for check, value in zip(checks, key, strict=True)]
    except (ValueError, TypeError, RecursionError) as exc:  # binascii.Error, UnicodeDecodeError: ValueErrors
        raise BadRequest(f"cursor {cursor[:40]!r} is not a cursor of this list",
                         hint="pass the next_cursor of this list's previous page, or no cursor for the first "
                              "page") from exc


def page(kind: str, rows: list[dict], limit: int, key: Callable[[dict], Sequence[Any]],
         item: Callable[[dict], T]) -> Page[T]:
    """``rows`` were fetched with ``limit + 1``: one more than asked says whether there is a next page."""
    more = len(rows) > limit
    rows = rows[:limit]
    return Page[Any](items=[item(r) for r in rows],
                     next_cursor=encode_cursor(kind, key(rows[-1])) if more and rows else None)
