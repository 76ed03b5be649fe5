"""The values a statement states: numbers, counts and frequencies, dates, clock times, weekdays, months.

A knowledge update is often the same sentence with another value ("I go to yoga twice a week" / "... three times
a week", "1250 followers" / "close to 1300"). Four places read values, all from here: the write track's unit
extraction keeps a value with the words before it (:mod:`app.models.tasks.extract_atomic_units`), the dream's
value scan (``memvault.value_tokens_v2`` is given :data:`VALUE_PATTERN` as a parameter), its offline judge
(:mod:`app.models.tasks.resolve_conflict`) and the read track's CurrentFirst stage (:mod:`app.read.current`).

:data:`VALUE_PATTERN` is written in the subset of regular expressions that Python's ``re`` and PostgreSQL's
ARE read alike (no ``\\b``: PostgreSQL reads it as a backspace; word edges are look-arounds), matched without
regard to case. "May" is left out (a modal verb far more often than a month) and so is "one" (a pronoun).
"""

from __future__ import annotations

import re

NUMBER_WORDS: tuple[str, ...] = (
    "once", "twice", "thrice", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
    "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty",
    "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety", "hundred", "thousand", "million", "dozen",
    "half", "daily", "weekly", "monthly", "yearly",
)
WEEKDAYS: tuple[str, ...] = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTHS: tuple[str, ...] = ("january", "february", "march", "april", "june", "july", "august", "september",
                           "october", "november", "december")
_ZH_NUMERALS = "一二三四五六七八九十百千萬万兩两"
_EDGE_L, _EDGE_R = r"(?<![A-Za-z0-9_])", r"(?![A-Za-z0-9_])"

VALUE_PATTERN = (
    r"\d{4}-\d{2}-\d{2}"  # an ISO date, whole
    r"|\d+(?:[.,:/-]\d+)*%?"  # 5, 2,000, 3.5, 10-12, 9:30, 50%
    rf"|{_EDGE_L}(?:{'|'.join(NUMBER_WORDS + WEEKDAYS + MONTHS)}){_EDGE_R}"
    rf"|星期[一二三四五六日天]|週[一二三四五六日]|[{_ZH_NUMERALS}]+[點点號号月年天個个元塊块]?"
)
VALUE = re.compile(VALUE_PATTERN, re.I)

# A value that places something in time (a weekday, a month, a date, a clock time): two past events anchored at
# different times both happened; they are not an update of each other.
TIME_ANCHOR = re.compile(
    rf"\d{{4}}-\d{{2}}-\d{{2}}|\d{{1,2}}:\d{{2}}|\b(?:{'|'.join((*WEEKDAYS, *MONTHS, 'may'))})\b|星期|週|[月號号]", re.I)

# A period a statement is about, relative to when it was said: two statements about different periods ("I read 12
# books last year" / "I have read 4 books so far this year") are two facts, not an update of one.
PERIOD = re.compile(
    r"\b(?:(?:last|this|next|past)\s+(?:year|month|week|weekend|summer|winter|spring|fall|autumn|semester|quarter|"
    r"season)|yesterday|today|tonight|tomorrow)\b|去年|今年|明年|上個月|上个月|這個月|这个月|昨天|今天|明天",
    re.I,
)


PAST_EVENT = re.compile(
    r"\b(?:\w{3,}ed|ran|went|did|had|met|saw|bought|got|took|made|came|ate|drove|flew|wrote|gave|won|lost|spent|"
    r"sold|paid|left|read|swam|rode|sang|began|found|heard|told|said|felt|kept|slept|taught|thought|caught)\b|了|過|过",
    re.I,
)


def separate_events(old: str, new: str, v_old: set[str], v_new: set[str]) -> bool:
    """Two past events told apart by a time anchor among the values that differ ("I ran 5 miles on Monday" / "I
    ran 3 miles on Tuesday"): both happened, neither updates the other. A state moved to another time ("the
    meeting is on Monday" / "... on Tuesday") is not past tense: an update."""
    differ = v_old ^ v_new
    return any(TIME_ANCHOR.search(v) for v in differ) and bool(PAST_EVENT.search(old)) \
        and bool(PAST_EVENT.search(new))


def values(text: str) -> set[str]:
    """The values of ``text``, lower-cased."""
    return {v.lower() for v in VALUE.findall(text or "")}


_CALENDAR = frozenset(WEEKDAYS + MONTHS)


def is_quantity(token: str) -> bool:
    """Whether one word (punctuation around it ignored) states a quantity: a number, a count, a frequency or a
    date ("3", "10-12", "twice", "1300.", "2024-09-01"), not only a weekday or a month name."""
    return any(v.lower() not in _CALENDAR for v in VALUE.findall(token))


def _periods(text: str) -> set[str]:
    return {" ".join(m.lower().split()) for m in PERIOD.findall(text or "")}


def different_periods(old: str, new: str) -> bool:
    """Both statements name the period they are about, and not the same one ("last year" / "this year")."""
    p_old, p_new = _periods(old), _periods(new)
    return bool(p_old and p_new and p_old != p_new)
