"""Value types shared by the normalizer passes, and the span bookkeeping they share.

A pass reports what it recognised as ``NormalizedSpan`` objects; ``ContentNormalizer`` collects them into one
``NormalizedContent``. Offsets are always into the *preprocessed* text (after ``preprocess_chinese``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal

SpanKind = Literal["date", "datetime", "money", "proportion", "duration"]

# Private-use character written over the spans of earlier passes, so a later pass cannot match inside them
# while every offset stays the same. It is matched by no pattern of any pass.
MASK_CHAR = "\ue000"


@dataclass(frozen=True, slots=True)
class NormalizedSpan:
    """One recognised expression.

    ``value`` is an ISO-8601 string (date, datetime, duration), ``{"amount": float, "currency": str}`` (money)
    or a float in [0, 1] (proportion). ``token`` is the text that replaces ``surface`` in the canonical form.
    ``value`` takes no part in hashing (a money value is a dict).
    """

    kind: SpanKind
    surface: str
    start: int
    end: int
    value: object = field(hash=False)
    token: str


@dataclass(frozen=True, slots=True)
class NormalizedContent:
    """The result of ``ContentNormalizer.normalize``.

    ``original`` is the input exactly as given; ``preprocessed`` is it after ``preprocess_chinese`` (the text
    the span offsets point into); ``text`` is ``preprocessed`` with every span replaced by its token.
    """

    original: str
    text: str
    spans: tuple[NormalizedSpan, ...]
    preprocessed: str


def pick_non_overlapping(candidates: Iterable[NormalizedSpan]) -> list[NormalizedSpan]:
    """Leftmost-longest choice among candidate spans of one pass; returns them sorted by start."""
    chosen: list[NormalizedSpan] = []
    last_end = -1
    for span in sorted(candidates, key=lambda s: (s.start, -(s.end - s.start))):
        if span.start >= last_end and span.end > span.start:
            chosen.append(span)
            last_end = span.end
    return chosen


def mask(text: str, spans: Sequence[NormalizedSpan]) -> str:
    """Overwrite each span with ``MASK_CHAR`` (same length, so offsets keep their meaning)."""
    if not spans:
        return text
    parts: list[str] = []
    pos = 0
    for span in sorted(spans, key=lambda s: s.start):
        parts.append(text[pos : span.start])
        parts.append(MASK_CHAR * (span.end - span.start))
        pos = span.end
    parts.append(text[pos:])
    return "".join(parts)


def _is_ascii_alnum(ch: str) -> bool:
    return ch.isascii() and ch.isalnum()


def render(text: str, spans: Sequence[NormalizedSpan]) -> str:
    """``text`` with each span replaced by its token.

    A space is put between a token and a neighbouring ASCII letter or digit it would otherwise fuse with
    (``"70%off"`` becomes ``"0.7 off"``, not ``"0.7off"``).
    """
    parts: list[str] = []
    pos = 0
    for span in sorted(spans, key=lambda s: s.start):
        before = text[pos : span.start]
        token = span.token
        prev_char = before[-1:] if before else (parts[-1][-1:] if parts and parts[-1] else "")
        if prev_char and token and _is_ascii_alnum(prev_char) and _is_ascii_alnum(token[0]):
            before += " "
        parts.append(before)
        parts.append(token)
        pos = span.end
        nxt = text[pos : pos + 1]
        if nxt and token and _is_ascii_alnum(nxt) and _is_ascii_alnum(token[-1]):
            parts.append(" ")
    parts.append(text[pos:])
    return "".join(parts)


def format_number(value: float, max_decimals: int = 6) -> str:
    """Plain decimal text, no exponent, no trailing zeros: 3000.0 -> "3000", 0.125 -> "0.125"."""
    if not math.isfinite(value):
        return str(value)
    if value == int(value) and abs(value) < 1e18:
        return str(int(value))
    out = f"{value:.{max_decimals}f}".rstrip("0").rstrip(".")
    return out or "0"


_ASCII_LOWER = {code: code + 32 for code in range(ord("A"), ord("Z") + 1)}


def fold_case(text: str) -> str:
    """Lower-cased ``text`` of the same length, so offsets carry over.

    Patterns then match it case-sensitively, which is several times faster in ``re`` than IGNORECASE.
    """
    lowered = text.lower()
    return lowered if len(lowered) == len(text) else text.translate(_ASCII_LOWER)


def scan(first: re.Pattern[str], pattern: re.Pattern[str], text: str) -> Iterator[re.Match[str]]:
    """Like ``pattern.finditer(text)``, for a pattern whose matches can only begin where ``first`` (a
    one-character class) matches.

    ``re`` finds a character class quickly but tries a pattern that opens with a lookbehind or an alternation
    of classes at every position; trying ``pattern`` only where ``first`` matches is several times faster on
    text where such characters are sparse (digits and Chinese numerals in ordinary prose).
    """
    pos = 0
    for candidate in first.finditer(text):
        start = candidate.start()
        if start < pos:
            continue
        match = pattern.match(text, start)
        if match is not None and match.end() > start:
            yield match
            pos = match.end()
