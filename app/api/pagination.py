"""Cursor pagination for every list route: ``?limit=N&cursor=...`` in, ``{"items": [...], "next_cursor": ...}`` out.

The cursor is opaque to clients: the last row's sort key, as URL-safe base64 of JSON, tagged with the route's name
so a cursor of one list is refused by another. Keyset pagination (each SQL list function takes the key and returns
the rows after it) stays stable while rows are added, and costs the same on page 1 and page 1000.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from litestar.params import Parameter

from app.api.schemas import Page  # noqa: F401  (list routes import it from here too)
from app.errors import InvalidInput

T = TypeVar("T")
MAX_LIMIT = 500


def limit_param(default: int):
    return Parameter(default=default, ge=1, le=MAX_LIMIT, description=f"Items per page (1-{MAX_LIMIT}).")


CURSOR = Parameter(required=False, description="`next_cursor` of the previous page; absent: the first page.")


def encode_cursor(kind: str, key: Sequence[Any]) -> str:
    raw = json.dumps([kind, list(key)], separators=(",", ":"), default=str).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(kind: str, cursor: str | None) -> list[Any] | None:
    """The key a cursor carries (None: first page); a cursor that is not one of this list's is a 422."""
    if not cursor:
        return None
    try:
        tag, key = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        if tag != kind or not isinstance(key, list):
            raise ValueError(tag)
    except (ValueError, TypeError) as exc:
        raise InvalidInput(f"cursor {cursor[:40]!r} is not a cursor of this list",
                           hint="pass the next_cursor of this list's previous page, or no cursor for the "
                                "first page") from exc
    return key


def page(kind: str, rows: list[dict], limit: int, key: Callable[[dict], Sequence[Any]],
         item: Callable[[dict], T]) -> Page[T]:
    """``rows`` were fetched with ``limit + 1``: one more than asked says whether there is a next page."""
    more = len(rows) > limit
    rows = rows[:limit]
    return Page[Any](items=[item(r) for r in rows],
                     next_cursor=encode_cursor(kind, key(rows[-1])) if more and rows else None)
