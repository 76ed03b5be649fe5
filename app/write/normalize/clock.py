"""Times of day that attach to a date found by ``TemporalNormalizer`` ("next Wednesday at 7pm", "明天晚上7點").

A time is only ever read next to a date: right after it ("March 12 at 19:00", "明天晚上七點半", "2026-03-12T19:00")
or, for English, right before it ("7pm next Wednesday", "at noon tomorrow"). A time on its own is left alone.

Documented rules:

- "7pm", "7:30 p.m.", "19:00", "noon", "T19:00[:ss][Z|+hh:mm]" (the offset is consumed and ignored: wall-clock
  time is kept) are read as they are; a bare hour ("at 7") is read only with a period word ("evening at 7",
  "晚上7點") or the Chinese 點/点 ("7點" is 07:00, "19點" is 19:00);
- period words: morning/早上/上午/清晨/早 = a.m.; afternoon/evening/下午/傍晚 = p.m. (1-11 -> 13-23);
  night/tonight/晚上/晚間/夜裡/半夜/今晚 = night: 5-11 -> 17-23, 12 and 0-4 roll over to the next day ("明天晚上12點" is the
  day after tomorrow at 00:00); 中午 = 11, 12 as is, 1-2 -> 13-14; 凌晨 = 12 -> 0; an explicit am/pm wins over the
  period word;
- 點半 = :30, 一刻 = :15, 三刻 = :45.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .numerals import CN_DIGITS, parse_number

_AM = frozenset({"morning", "早上", "上午", "清晨", "早", "今早", "明早", "a"})
_PM = frozenset({"afternoon", "evening", "下午", "傍晚", "p"})
_NIGHT = frozenset(
    {"night", "tonight", "晚上", "晚間", "晚间", "夜裡", "夜里", "半夜", "今晚", "明晚", "昨晚", "今夜"}
)
_NIGHT |= frozenset({"明夜", "昨夜", "晚"})
_NOON = frozenset({"中午", "noon"})
_EARLY = frozenset({"凌晨"})

_CN_HOUR = rf"(?:\d{{1,2}}|[{CN_DIGITS}十]{{1,3}})"

_EN_CORE = r"""(?:
    (?<![\d:])(?P<h1>\d{1,2})(?::(?P<m1>[0-5]\d))?\s*(?P<ap>[ap])(?:m\b|\.m\b\.?)
  | (?<![\d:])(?P<h2>\d{1,2}):(?P<m2>[0-5]\d)(?::[0-5]\d)?(?![\d:])
  | (?P<noon>noon|midday)\b
  | (?<![\d:])(?P<h3>\d{1,2})(?:\s*o'?clock\b)?(?![\d:])
)"""

_EN_AFTER = re.compile(
    r"T(?P<h0>[01]\d|2[0-3]):(?P<m0>[0-5]\d)(?::[0-5]\d(?:\.\d{1,6})?)?(?:Z|[+-]\d{2}:?\d{2})?(?![\w:])"
    r"|(?:\s*,)?\s*(?:(?:in\s+the\s+|at\s+)?(?P<per>morning|afternoon|evening|night)\s*,?\s*)?"
    r"(?:(?:at|@|around|by)\s*)?" + _EN_CORE,
    re.IGNORECASE | re.VERBOSE,
)
_EN_BEFORE = re.compile(
    r"(?:\b(?:at|@|around)\s*)?(?:"
    r"(?<![\d:])(?P<h1>\d{1,2})(?::(?P<m1>[0-5]\d))?\s*(?P<ap>[ap])(?:m\b|\.m\b\.?)"
    r"|(?<![\d:])(?P<h2>\d{1,2}):(?P<m2>[0-5]\d)|(?P<noon>noon|midday)\b)\s*,?\s*(?:on\s+)?\Z",
    re.IGNORECASE,
)
_CN_AFTER = re.compile(
    r"\s*(?P<per>早上|上午|中午|下午|傍晚|晚上|晚間|晚间|夜裡|夜里|凌晨|半夜|清晨|早|晚)?\s*(?:"
    rf"(?P<h>{_CN_HOUR})\s*[點点時时](?![點点兒儿])"
    rf"(?:(?P<half>半)|(?P<quarter>一刻|三刻)|整|\s*(?P<mi>\d{{1,2}}|[{CN_DIGITS}十]{{1,3}})\s*分?(?![個个人位]))?"
    r"|(?<![\d:])(?P<h2>\d{1,2}):(?P<m2>[0-5]\d)(?![\d:]))"
)


@dataclass(frozen=True, slots=True)
class ClockTime:
    """A time of day found next to a date; ``day_shift`` is 1 when night hours roll over past midnight."""

    start: int
    end: int
    hour: int
    minute: int
    day_shift: int = 0


def _resolve(hour: int, minute: int, period: str | None) -> tuple[int, int, int] | None:
    """Apply a period word to a clock hour; ``None`` when the combination is not a time."""
    if not (0 <= minute <= 59 and 0 <= hour <= 23):
        return None
    if period is None:
        return hour, minute, 0
    if period in _AM:
        if hour > 12:
            return None
        return (0 if hour == 12 else hour), minute, 0
    if period in _PM:
        if hour > 12 and period in {"a", "p"}:
            return None
        return (hour + 12 if 1 <= hour <= 11 else hour), minute, 0
    if period in _NIGHT:
        if hour == 12 or hour == 0:
            return 0, minute, 1
        if 1 <= hour <= 4:
            return hour, minute, 1
        return (hour + 12 if hour <= 11 else hour), minute, 0
    if period in _NOON:
        return (hour + 12 if 1 <= hour <= 2 else hour), minute, 0
    if period in _EARLY:
        return (0 if hour == 12 else hour), minute, 0
    return hour, minute, 0


def _from_english(match: re.Match[str], implied: str | None) -> tuple[int, int, int] | None:
    groups = match.groupdict()
    if groups.get("h0"):
        return int(groups["h0"]), int(groups["m0"]), 0
    period = (groups.get("per") or "").lower() or implied
    if groups["noon"]:
        return 12, 0, 0
    if groups["h1"]:
        return _resolve(int(groups["h1"]), int(groups["m1"] or 0), groups["ap"].lower())
    if groups["h2"]:
        hour = int(groups["h2"])
        return _resolve(hour, int(groups["m2"]), period if hour <= 12 else None)
    if groups.get("h3") and period:  # a bare hour needs a period word
        return _resolve(int(groups["h3"]), 0, period)
    return None


def time_after(text: str, pos: int, limit: int, implied: str | None = None) -> ClockTime | None:
    """A time starting at ``pos`` (after a date), ending by ``limit``; ``implied``: the date word's period."""
    match = _CN_AFTER.match(text, pos, limit)
    if match and (match.group("h") or match.group("h2")):
        period = match.group("per") or implied
        if match.group("h2"):
            hour, minute = int(match.group("h2")), int(match.group("m2"))
        else:
            hour_value = parse_number(match.group("h"))
            minute_value = parse_number(match.group("mi")) if match.group("mi") else 0.0
            if hour_value is None or minute_value is None:
                return None
            hour, minute = int(hour_value), int(minute_value)
            if match.group("half"):
                minute = 30
            elif match.group("quarter"):
                minute = 15 if match.group("quarter") == "一刻" else 45
        resolved = _resolve(hour, minute, period)
        if resolved is not None and match.end() > pos:
            return ClockTime(pos, match.end(), *resolved)
    match = _EN_AFTER.match(text, pos, limit)
    if match:
        resolved = _from_english(match, implied)
        if resolved is not None:
            return ClockTime(pos, match.end(), *resolved)
    return None


def time_before(text: str, pos: int, floor: int) -> ClockTime | None:
    """An English time ending at ``pos`` (before a date) and starting at or after ``floor``."""
    start = max(floor, pos - 24)
    match = _EN_BEFORE.search(text, start, pos)
    if not match:
        return None
    resolved = _from_english(match, None)
    if resolved is None:
        return None
    return ClockTime(match.start(), pos, *resolved)
