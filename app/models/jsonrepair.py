"""Turn a model's near-JSON reply into a Python object.

Small models wrap JSON in prose or code fences, leave trailing commas, use single quotes or Python literals, emit
``<think>`` blocks, or stop mid-object when they hit ``max_tokens``. :func:`parse_json_reply` tries strict JSON
first, then the repairs below in order, and raises :class:`ValueError` if nothing parses.
"""

from __future__ import annotations

import json
import re
from typing import Any

_THINK = re.compile(r"<think>.*?(</think>|$)", re.S | re.I)
_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)(?:```|$)", re.S)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_PY_LITERALS = {"True": "true", "False": "false", "None": "null"}


def parse_json_reply(text: str) -> Any:
    """The JSON value in ``text``, repaired if needed. Raises ValueError."""
    if not text or not text.strip():
        raise ValueError("empty reply")
    text = _THINK.sub("", text).strip()
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    fenced = _FENCE.search(text)
    if fenced:
        text = fenced.group(1).strip()
    body = _extract_json_region(text)
    if body is None:
        raise ValueError(f"no JSON object in reply: {text[:120]!r}")
    for candidate in _repairs(body):
        try:
            return json.loads(candidate)
        except json.JSONDecodeError:
            continue
    raise ValueError(f"unrepairable JSON: {body[:160]!r}")


def _extract_json_region(text: str) -> str | None:
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        return None
    start = min(starts)
    # Cut at the bracket that closes the first one, if it closes; else keep the (truncated) rest.
    end = _matching_end(text, start)
    return text[start : end + 1] if end is not None else text[start:]


def _matching_end(text: str, start: int) -> int | None:
    depth = 0
    in_str: str | None = None
    escape = False
    for i in range(start, len(text)):
        ch = text[i]
        if in_str:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == in_str:
                in_str = None
        elif ch in "\"'":
            in_str = ch
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return i
    return None


def _repairs(body: str):
    fixed = _TRAILING_COMMA.sub(r"\1", body)
    yield fixed
    quoted = _normalize_quotes(fixed)
    yield quoted
    yield _TRAILING_COMMA.sub(r"\1", close_truncated(quoted))


def _normalize_quotes(s: str) -> str:
    """Single-quoted strings to double-quoted; bare Python literals to JSON ones (outside strings)."""
    out: list[str] = []
    i, n = 0, len(s)
    while i < n:
        ch = s[i]
        if ch == '"':
            j = i + 1
            while j < n and s[j] != '"':
                j += 2 if s[j] == "\\" else 1
            out.append(s[i : j + 1])
            i = j + 1
        elif ch == "'":
            j = i + 1
            buf: list[str] = []
            while j < n and s[j] != "'":
                if s[j] == "\\" and j + 1 < n:
                    buf.append(s[j + 1] if s[j + 1] == "'" else s[j : j + 2])
                    j += 2
                    continue
                buf.append('\\"' if s[j] == '"' else s[j])
                j += 1
            out.append('"' + "".join(buf) + ('"' if j < n else ""))
            i = j + 1
        elif ch.isalpha():
            j = i
            while j < n and (s[j].isalnum() or s[j] == "_"):
                j += 1
            word = s[i:j]
            out.append(_PY_LITERALS.get(word, word))
            i = j
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def close_truncated(s: str) -> str:
    """Close a JSON text cut off mid-way: finish the open string, drop a dangling key or comma, close brackets."""
    stack: list[str] = []
    in_str = False
    escape = False
    for ch in s:
        if in_str:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]" and stack:
            stack.pop()
    if escape:
        s = s[:-1]
    if in_str:
        s += '"'
    s = s.rstrip()
    # A dangling `"key":` or `"key"` inside an object, or a trailing comma / colon, cannot stand.
    for _ in range(3):
        stripped = re.sub(r'(,|\{)\s*"[^"]*"\s*:?\s*$', r"\1", s) if stack and stack[-1] == "}" else s
        stripped = re.sub(r"[,:]\s*$", "", stripped).rstrip()
        if stripped == s:
            break
        s = stripped
    return s + "".join(reversed(stack))
