"""DurationNormalizer: lengths of time to ISO-8601 durations ("two and a half hours" -> "PT2H30M").

Forms read: "2.5h", "1h30m", "150 min", "90 seconds", "3 days", "two and a half hours", "an hour and a half",
"half an hour", "1 hour and 30 minutes", "兩個半小時", "半小時", "三十分鐘", "1.5 小時", "2小時30分", "一年半", "一刻鐘". Documented
rules:

- One canonical form per length, so that equal lengths compare equal: hours, minutes and seconds are summed
  into seconds and written as ``PTnHnMnS`` with the largest units ("150 min" and "2.5h" are both ``PT2H30M``,
  "90 seconds" is ``PT1M30S``); hours are never folded into days. Weeks become days ("2 weeks" is ``P14D``).
  Fractions move down a unit: half a year is 6 months, half a month 15 days, half a day 12 hours.
- Atoms join into one length with "and", "," or nothing ("1 hour and 30 minutes", "2h 15m"); in Chinese
  only a smaller completing unit joins without 又/零 (一年三個月, 兩小時三十分, 三分二十秒), so 一週五天 ("five
  days a week") stays two lengths. 分 alone is minutes only after hours or before seconds; "30分" alone may be a
  score and is left.
- Single-letter units only right after digits and only "h" may stand alone ("2.5h", "1h30m", "2h15m30s");
  "100m" (metres), "90s" (a decade) and "3d" are not durations. "min", "mins", "hr", "hrs", "sec", "secs" are.
- Not durations: "N years old" (an age); "a day"/"a month" after a count, a number or a unit, which makes it a
  rate ("three times a day", "8 hours a day", "$20 a month"); the right end of a range ("2-3 hours": left
  alone); 第三天 (an ordinal); 三月 (March: 月 needs 個, 三個月); 日 (a day of the month); 半天 ("a long while");
  "2026年" (nothing above 150 years is read). Temporal phrases ("3 days ago", "in 3 days", 三天後) are taken by
  the temporal pass, which runs before this one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .numerals import (
    CN_NUMERAL_CHARS,
    DECIMAL,
    EN_NUMBER,
    MIXED_NUMBER,
    MIXED_NUMBER_BOUNDARY,
    alternation,
    parse_number,
)
from .spans import MASK_CHAR, NormalizedSpan, fold_case, format_number, pick_non_overlapping, scan

_EN_UNITS = {
    "second": "s", "seconds": "s", "sec": "s", "secs": "s", "minute": "min", "minutes": "min", "min": "min",
    "mins": "min", "hour": "h", "hours": "h", "hr": "h", "hrs": "h", "h": "h", "day": "d", "days": "d",
    "week": "w", "weeks": "w", "wk": "w", "wks": "w", "month": "mo", "months": "mo", "year": "y",
    "years": "y", "yr": "y", "yrs": "y",
}  # fmt: skip
_CN_UNITS = {
    "秒": "s", "秒鐘": "s", "秒钟": "s", "分": "min", "分鐘": "min", "分钟": "min", "小時": "h", "小时": "h",
    "鐘頭": "h", "钟头": "h", "天": "d", "週": "w", "周": "w", "星期": "w", "禮拜": "w", "礼拜": "w", "月": "mo",
    "年": "y",
}  # fmt: skip
_SECONDS = {"s": 1, "min": 60, "h": 3600}
_MAX_YEARS = 150


_EN_LONG_UNIT = alternation(u for u in _EN_UNITS if u != "h")
_CN_UNIT_ALL = alternation(_CN_UNITS)
_CN_UNIT_STRICT = (  # 30分 alone may be a score; 三分二十秒 is a length
    alternation(u for u in _CN_UNITS if u != "分") + rf"|分(?=\s?(?:{MIXED_NUMBER})\s?秒)"
)
# Joined without a connector only to a smaller unit that completes it: 一年三個月, 兩小時三十分, 三分二十秒; not
# 一週五天 or 一天八小時, which are rates ("five days a week").
_CN_UNIT_FOLLOW = alternation(["分鐘", "分钟", "分", "秒鐘", "秒钟", "秒", "月"])
_HALF = r"\s+and\s+a\s+half"


def _named(pattern: str, named: bool) -> str:
    """``pattern`` with its named groups kept, or made non-capturing (for the repeated, joined atoms)."""
    return pattern if named else re.sub(r"\(\?P<\w+>", "(?:", pattern)


def _en_atom(named: bool, article: bool = True) -> str:
    """One "<number> <unit>"; ``article`` allows "a"/"an" as the number.

    A joined atom takes no article: "8 hours a day" is a rate, not one day and eight hours.
    """
    number = rf"{DECIMAL}|{EN_NUMBER}" + ("|an?" if article else "")
    return _named(
        rf"(?:(?P<n>{number})(?P<h1>{_HALF})?\s*-?\s*"
        rf"(?P<u>{_EN_LONG_UNIT})\b(?P<h2>{_HALF})?"
        rf"|(?P<halfa>half)\s+an?\s+(?P<u2>{_EN_LONG_UNIT})\b)",
        named,
    )


def _cn_atom(named: bool, units: str) -> str:
    return _named(
        rf"(?:(?P<n>{MIXED_NUMBER})\s?(?P<ge>個|个)?\s?(?P<h1>半)?|(?P<halfa>半)\s?(?P<ge2>個|个)?)\s?"
        rf"(?P<u>{units})(?P<h2>半)?",
        named,
    )


_EN_ATOM_RE = re.compile(_en_atom(True))
_EN_RE = re.compile(
    rf"(?<![a-z0-9])(?<!\d[.,]){_en_atom(False)}(?:\s*,?\s*(?:and\s+)?{_en_atom(False, False)})*(?!\s+old\b)"
)
_COMPACT_RE = re.compile(
    r"(?<![a-z0-9])(?<!\d\.)(?P<h>\d{1,4}(?:\.\d{1,3})?)h"
    r"(?:\s?(?P<m>\d{1,2})m(?:in)?)?(?:\s?(?P<s>\d{1,2})s)?(?![a-z0-9])"
)
_CN_ATOM_RE = re.compile(_cn_atom(True, _CN_UNIT_ALL))
_CN_RE = re.compile(
    rf"(?<!第){MIXED_NUMBER_BOUNDARY}{_cn_atom(False, _CN_UNIT_STRICT)}"
    rf"(?:\s?(?:又|零)?\s?{_cn_atom(False, _CN_UNIT_FOLLOW)})*"
)
_QUARTER_RE = re.compile(r"(?P<n>[一二兩两三]|[1-3])\s?刻(?:鐘|钟)")
_RANGE_BEFORE = re.compile(r"\d\s*[-~–]\s*\Z")
# "a day" after these is a rate, not a length: "three times a day", "8 hours a day", "$20 a month".
_NOT_BEFORE_ARTICLE = re.compile(
    rf"(?:\b(?:once|twice|thrice|times|per|every|each|{_EN_LONG_UNIT})|[\d%{MASK_CHAR}])\s*\Z"
)
_EN_GATE = re.compile(r"sec|min|hour|hr|day|week|wk|month|year|yr")
_COMPACT_GATE = re.compile(r"\dh")
_CN_GATE = re.compile(r"[秒分時时頭头天週周期拜月年]")
_CN_FIRST = re.compile(rf"[\d{CN_NUMERAL_CHARS}半]")  # where a Chinese length can begin (see ``scan``)


@dataclass
class _Total:
    years: float = 0.0
    months: float = 0.0
    days: float = 0.0
    seconds: float = 0.0

    def add(self, amount: float, unit: str) -> None:
        if unit in _SECONDS:
            self.seconds += amount * _SECONDS[unit]
        elif unit in {"d", "w"}:
            self.days += amount * (7 if unit == "w" else 1)
        elif unit == "mo":
            self.months += amount
        else:
            self.years += amount

    def iso(self) -> str | None:
        """Fold fractions down one unit and write ``PnYnMnDTnHnMnS``; ``None`` when absurdly large."""
        days_total = self.years * 366 + self.months * 31 + self.days + self.seconds / 86400
        if days_total > _MAX_YEARS * 366:
            return None
        years, months, days, seconds = int(self.years), self.months, self.days, self.seconds
        months += (self.years - years) * 12
        whole_months = int(round(months, 6))
        days += (months - whole_months) * 30
        whole_days = int(round(days, 6))
        seconds = round(seconds + (days - whole_days) * 86400, 3)
        hours, rest = divmod(seconds, 3600)
        minutes, secs = divmod(rest, 60)
        date_part = "".join(f"{v}{u}" for v, u in ((years, "Y"), (whole_months, "M"), (whole_days, "D")) if v)
        time_part = "".join(
            f"{format_number(v, 3)}{u}" for v, u in ((hours, "H"), (minutes, "M"), (round(secs, 3), "S")) if v
        )
        if not date_part and not time_part:
            return "PT0S"
        return "P" + date_part + ("T" + time_part if time_part else "")


def _amount(atom: re.Match[str]) -> float | None:
    """The number of units in one atom: "two and a half" 2.5, "an" 1, 兩個半 2.5, 半 0.5."""
    if atom["halfa"]:
        return None if atom["u"] == "天" else 0.5  # 等了半天 means "a long while", not 12 hours
    number = (atom["n"] or "").strip()
    value = 1.0 if number in {"a", "an"} else parse_number(number)
    if value is None:
        return None
    return value + (0.5 if atom["h1"] or atom["h2"] else 0.0)


class DurationNormalizer:
    """Finds lengths of time (see module docs for the canonical form and the exclusions)."""

    def find(self, text: str) -> list[NormalizedSpan]:
        found: list[NormalizedSpan] = []
        folded = fold_case(text)
        for m in _EN_RE.finditer(folded) if _EN_GATE.search(folded) else ():
            if _RANGE_BEFORE.search(text, max(0, m.start() - 4), m.start()):
                continue
            if m[0].startswith("a") and _NOT_BEFORE_ARTICLE.search(folded, max(0, m.start() - 12), m.start()):
                continue  # "three times a day" is a frequency
            total = _Total()
            for atom in _EN_ATOM_RE.finditer(m[0]):
                amount = _amount(atom)
                if amount is None:
                    break
                total.add(amount, _EN_UNITS[atom["u"] or atom["u2"]])
            else:
                self._emit(found, text, m.start(), m.end(), total)
        for m in _COMPACT_RE.finditer(folded) if _COMPACT_GATE.search(folded) else ():
            total = _Total()
            total.add(float(m["h"]), "h")
            total.add(float(m["m"] or 0), "min")
            total.add(float(m["s"] or 0), "s")
            self._emit(found, text, m.start(), m.end(), total)
        for m in scan(_CN_FIRST, _CN_RE, text) if _CN_GATE.search(text) else ():
            total = _Total()
            for atom in _CN_ATOM_RE.finditer(m[0]):
                amount = _amount(atom)
                if amount is None or (atom["u"] == "月" and not (atom["ge"] or atom["ge2"])):  # 三月 is March
                    break
                total.add(amount, _CN_UNITS[atom["u"]])
            else:
                self._emit(found, text, m.start(), m.end(), total)
        for m in _QUARTER_RE.finditer(text) if "刻" in text else ():
            total = _Total()
            total.add((parse_number(m["n"]) or 0) * 15, "min")
            self._emit(found, text, m.start(), m.end(), total)
        return pick_non_overlapping(found)

    @staticmethod
    def _emit(out: list[NormalizedSpan], text: str, start: int, end: int, total: _Total) -> None:
        value = total.iso()
        if value is not None:
            out.append(NormalizedSpan("duration", text[start:end], start, end, value, value))
