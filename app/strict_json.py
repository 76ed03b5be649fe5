"""JSON text read strictly, by every reader of what a client sends (the API's bodies, ``app.api.body``; an
export being imported, ``app.portability.importer``): Python's decoder also takes ``NaN``, ``Infinity``, numbers
too large for a double (``1e999`` as infinity) and strings holding a lone UTF-16 surrogate (``"\\ud800"``, which
no UTF-8 encoder nor PostgreSQL text can hold). Here each is a :class:`NotStrictJSON` saying what it was."""

from __future__ import annotations

import json
import math
import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")


class NotStrictJSON(ValueError):
    """Text that is not strict JSON (the message says why)."""


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _double(text: str) -> float:
    """A JSON number with a fraction or an exponent: a double, refused when too large for one."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:40]} is too large for a double")
    return value


def _number(text: str) -> float | int:
    """As :func:`_double`, but an integral one (``200.0``, ``1e2``) is the integer it equals, as JSON Schema
    counts it (an integer field of a request takes it)."""
    value = _double(text)
    return int(value) if value.is_integer() and abs(value) < 2**53 else value


def loads(text: str, *, integral_as_int: bool = False) -> Any:
    """The value of ``text``; :class:`NotStrictJSON` for anything but strict JSON. ``integral_as_int``: read
    ``3.0`` as 3 (a request validated against its JSON Schema). A document nested deeper than the interpreter's
    stack raises RecursionError (the caller says so in its own terms)."""
    try:
        value = json.loads(text, parse_constant=_constant, parse_float=_number if integral_as_int else _double)
    except json.JSONDecodeError as exc:
        raise NotStrictJSON(f"is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from exc
    except ValueError as exc:  # a constant or number refused above, an integer of thousands of digits
        raise NotStrictJSON(f"is not valid JSON: {str(exc)[:120]}") from exc
    _no_lone_surrogate(value)
    return value


def _no_lone_surrogate(value: Any) -> None:
    """Walks the decoded value without recursion (its depth is the sender's choice)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                raise NotStrictJSON("holds a lone UTF-16 surrogate (such as \\ud800) in a string: a surrogate "
                                    "escape must be half of a pair")
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
