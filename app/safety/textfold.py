"""Fold text for matching while keeping a map back to the original offsets.

Rules match a *folded* view of the text: NFKC (full-width Latin and punctuation become ASCII, so ``ｉｇｎｏｒｅ`` and
``忽略：`` match the same patterns as ``ignore`` and ``忽略:``) with invisible characters removed (zero-width spaces,
joiners, bidi controls, soft hyphens: the usual way to split a trigger word so that a naive filter misses it).
Case is left alone; patterns are compiled case-insensitive.

Hits must point into the caller's text (sanitize redacts the original), so folding also returns, for every folded
character, the index of the original character it came from. Most turns are ASCII or already NFKC without invisible
characters; those take the fast path and the map is ``None`` (identity).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

# Zero-width and formatting characters that render as nothing.
_INVISIBLE = (
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b\u200c\u200d\u200e\u200f"
    "\u202a\u202b\u202c\u202d\u202e\u2060\u2061\u2062\u2063\u2064\u2066\u2067\u2068\u2069\u3164\ufeff\uffa0"
)
_INVISIBLE_SET = frozenset(_INVISIBLE)
_INVISIBLE_RE = re.compile(f"[{_INVISIBLE}]")


@dataclass(frozen=True, slots=True)
class Folded:
    """The folded text and, unless folding was the identity, the original index of each folded character."""

    text: str
    origin: tuple[int, ...] | None
    original_length: int

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Map a half-open span of the folded text back to the original text."""
        if self.origin is None:
            return start, end
        if start >= len(self.origin):
            return self.original_length, self.original_length
        o_start = self.origin[start]
        o_end = self.origin[end - 1] + 1 if end > start else o_start
        return o_start, o_end


_FOLDABLE = re.compile(f"[^\\x00-\\x7f]")


def fold(text: str) -> Folded:
    if text.isascii() or (unicodedata.is_normalized("NFKC", text) and not _INVISIBLE_RE.search(text)):
        return Folded(text, None, len(text))
    out: list[str] = []
    origin: list[int] = []
    prev = 0
    for m in _FOLDABLE.finditer(text):
        i = m.start()
        ch = m.group()
        if ch in _INVISIBLE_SET:
            norm = ""
        else:
            norm = unicodedata.normalize("NFKC", ch)
            if norm == ch:
                continue
        out.append(text[prev:i])
        origin.extend(range(prev, i))
        out.append(norm)
        origin.extend([i] * len(norm))
        prev = i + 1
    out.append(text[prev:])
    origin.extend(range(prev, len(text)))
    return Folded("".join(out), tuple(origin), len(text))
