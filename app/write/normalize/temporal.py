"""TemporalNormalizer: dates and date-times, relative or absolute, English and Chinese, to ISO-8601.

Everything resolves against ``ref_time`` (the turn's own timestamp, made timezone-aware: naive means UTC) in
``ref_time``'s own wall clock; values carry no offset. Documented rules:

- Values: a day is ``YYYY-MM-DD`` (kind "date"); with a time of day ``YYYY-MM-DDTHH:MM`` (kind "datetime", see
  ``clock``); a week is ``YYYY-Www`` (ISO week), a month ``YYYY-MM``, a year ``YYYY`` (kind "date", reduced
  precision); "in 2 hours" / "十分鐘前" give a "datetime".
- Weeks start on Monday. "next/last/this <weekday>", 下週三/上週五/這週五/本週五, 下下週三 pick that weekday in the next /
  previous / current calendar week (so "next Wednesday" said on a Monday is nine days later, as 下週三 is; "this
  Friday" may lie in the past). "coming <weekday>" is the first one strictly after today, "past <weekday>" the
  last one strictly before. A bare weekday ("on Friday", 週五) is not resolved: past or future is unknowable.
- "in N units", "N units ago/from now", N天後, N週前, N個月後 (units minute..year; N in digits, words or Chinese,
  "a"/"an", 半): days and weeks are exact, months and years keep the day of month (clipped to the month's end).
  Beyond 150 years nothing is resolved; "in a minute" (an idiom for "soon") is not resolved either.
- Numeric dates: "YYYY-MM-DD", "YYYY/MM/DD" and "YYYY.MM.DD" (year first: never ambiguous). "A/B/YYYY",
  "A/B/YY" and "A-B-YYYY" are month first (US) unless the normalizer is made with ``day_first=True`` (the
  setting ``MEMVAULT_DAY_FIRST``: "03/04/2023" is then 3 April); either way a number over 12 is the day
  ("13/04/2023" and "04/13/2023" are both 13 April). A two-digit year is the one of its century nearest to
  ``ref_time``. "D.M.YYYY" ("03.04.2023") is day first whatever the setting (the locales that write dots with the
  year last all put the day first); other dotted numbers are not read (they look like versions). A bare "A/B"
  or "A-B" follows the same order rule and is a date only if its second number is written with two digits and is
  not 10 ("3/12", "3-12", "7/05"); "7/10", "3/4", "3-2" stay as they are
  (fractions and scores). A date cue before it ("on", "by", "due", "until", "since", "from", 在, 到, 截止...) or
  after it (a time, a weekday, 號/日) makes any valid A/B a date; a score or fraction cue ("scored", "rated",
  "page", 比分, "of", "people", 分, 人...) makes it not one.
- Month names: "March 12", "12 March", "Mar 12th, 2026", "the 12th of March", "March 2026" (-> YYYY-MM); "May"
  only capitalised (the verb "may" is not a month). Chinese: 3月12日, 三月十二日, 3月12號, 2026年3月12日, 2026年3月,
  下個月15號; a three-digit year or one after 民國 is a Republic-of-China year (+1911); a two-digit year is not
  read.
- A year left out resolves to the year (last, this or next) that puts the date nearest to ``ref_time``; on a
  tie the future wins; a day that exists in none of them (29 February) is not resolved.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from .clock import time_after, time_before
from .numerals import CN_DIGITS, CN_NUMERAL_CHARS, DECIMAL, EN_NUMBER, MIXED_NUMBER, alternation, parse_number
from .spans import NormalizedSpan, SpanKind, fold_case, scan

_WEEKDAYS = {
    "monday": 0, "mon": 0, "tuesday": 1, "tues": 1, "tue": 1, "wednesday": 2, "wed": 2, "thursday": 3,
    "thurs": 3, "thur": 3, "thu": 3, "friday": 4, "fri": 4, "saturday": 5, "sat": 5, "sunday": 6, "sun": 6,
}  # fmt: skip
_CN_WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_CN_WEEKDAYS |= {str(i): i - 1 for i in range(1, 8)}
_MONTHS = {
    "january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4, "may": 5,
    "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8, "september": 9, "sept": 9, "sep": 9,
    "october": 10, "oct": 10, "november": 11, "nov": 11, "december": 12, "dec": 12,
}  # fmt: skip
_REL_WEEK = {
    "next": 1,
    "last": -1,
    "this": 0,
    "下下": 2,
    "下": 1,
    "上上": -2,
    "上": -1,
    "這": 0,
    "这": 0,
    "本": 0,
}
_EN_DAY_OFFSETS = {"today": 0, "tonight": 0, "tomorrow": 1, "tmrw": 1, "tmr": 1, "yesterday": -1}
_CN_DAY_OFFSETS = {
    "大前天": -3, "大後天": 3, "大后天": 3, "前天": -2, "後天": 2, "后天": 2, "今天": 0, "明天": 1, "昨天": -1,
    "今日": 0, "明日": 1, "昨日": -1, "今晚": 0, "明晚": 1, "昨晚": -1, "今早": 0, "明早": 1, "昨早": -1,
    "今夜": 0, "明夜": 1, "昨夜": -1,
}  # fmt: skip
_CN_YEAR_OFFSETS = {"今年": 0, "明年": 1, "去年": -1, "後年": 2, "后年": 2, "前年": -2}
_UNIT_KEYS = {
    "min": "minute", "minute": "minute", "分鐘": "minute", "分钟": "minute", "hour": "hour", "hr": "hour",
    "小時": "hour", "小时": "hour", "鐘頭": "hour", "钟头": "hour", "day": "day", "天": "day", "日": "day",
    "week": "week", "週": "week", "周": "week", "星期": "week", "禮拜": "week", "礼拜": "week",
    "month": "month", "月": "month", "year": "year", "年": "year",
}  # fmt: skip
_MAX_YEARS = 150


_MONTH_ALT = alternation(_MONTHS)
_WEEKDAY_ALT = alternation(_WEEKDAYS)
_NUM = rf"(?:{DECIMAL}|{EN_NUMBER}|an?)"
_EN_UNIT = r"(?P<u>min(?:ute)?|hour|hr|day|week|month|year)s?"
_CN_SMALL = rf"(?:\d{{1,2}}|[{CN_DIGITS}十]{{1,3}})"
_CN_YEAR = rf"(?<![\d{CN_DIGITS}])(?P<roc>民國|民国)?\s*(?P<y>\d{{2,4}}|[〇零一二三四五六七八九]{{2,4}})\s*年"
_CN_WEEK = r"(?:個|个)?\s*(?:週|周|星期|禮拜|礼拜)"
_NOT_WORD_BEFORE = r"(?<![A-Za-z0-9:/$€£¥#-])(?<!\d[.,])"
_NOT_WORD_AFTER = r"(?![A-Za-z0-9/%:-]|[.,]\d)"

_DATE_CUE_BEFORE = re.compile(
    r"(?:\b(?:on|by|due|until|till|til|before|after|since|from|starting|through|thru|date[ds]?|deadline"
    rf"|expires?|{_WEEKDAY_ALT})\b\.?|[在於于到從从至迄截止期])\s*[:,(]?\s*\Z",
    re.IGNORECASE,
)
_DATE_CUE_AFTER = re.compile(
    rf"\s*(?:[號号日]|[(]?\s*(?:週|周|星期|禮拜|礼拜)|[(]?(?:{_WEEKDAY_ALT})\b"
    r"|(?:at\s+)?\d{1,2}(?::\d{2}|\s*[ap]\.?m\b)|早上|上午|中午|下午|晚上|凌晨|[-~]\s*\d{1,2}/\d{1,2})",
    re.IGNORECASE,
)
_NOT_DATE_BEFORE = re.compile(
    r"(?:\b(?:scored?|scores|rated?|rating|grade|got|gave|won|lost|beat|tied|pages?|pp?|chapters?|ch|steps?"
    r"|items?|lines?|versions?|ages?|ratio|odds|sizes?|rooms?)\b\.?|比分|比數|比数|分數|分数|第|得分|評分|评分)"
    r"(?:\s*(?:was|is|were|ended|of|是|為|为))?\s*:?\s*\Z",
    re.IGNORECASE,
)
_NOT_DATE_AFTER = re.compile(
    r"\s*(?:(?:of|out|people|persons|stars?|points?|pts|votes|users|pages)\b|[分人個个票位顆颗件張张])",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class _Hit:
    start: int
    end: int
    value: str
    day: date | None = None  # set when the value is one day, so a time of day may attach
    period: str | None = None  # period implied by the date word ("tonight", 今晚)


def _week_day(today: date, weekday: int, weeks: int) -> date:
    return today - timedelta(days=today.weekday()) + timedelta(weeks=weeks, days=weekday)


def _add_months(day: date, months: int) -> date:
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    return date(year, month + 1, min(day.day, calendar.monthrange(year, month + 1)[1]))


def _nearest(today: date, month: int, day: int) -> date | None:
    best: tuple[int, bool, date] | None = None
    for year in (today.year - 1, today.year, today.year + 1):
        try:
            candidate = date(year, month, day)
        except ValueError:
            continue
        key = (abs((candidate - today).days), candidate < today, candidate)
        best = key if best is None or key < best else best
    return best[2] if best else None


def _day_hit(m: re.Match[str], day: date | None, period: str | None = None) -> _Hit | None:
    return _Hit(m.start(), m.end(), day.isoformat(), day, period) if day else None


def _relative(
    m: re.Match[str], ref: datetime, amount_text: str, unit: str, sign: int, half: bool
) -> _Hit | None:
    """N units before (sign -1) or after (sign 1) ``ref``: days..years give a date, minutes/hours a time."""
    amount = 0.5 if amount_text == "半" else 1.0 if amount_text in {"a", "an"} else parse_number(amount_text)
    if amount is None:
        return None
    amount = (amount + 0.5 if half else amount) * sign
    unit = _UNIT_KEYS.get(unit.lower(), unit.lower())
    if unit in {"month", "year"}:
        months = amount * (12 if unit == "year" else 1)
        if abs(months) > _MAX_YEARS * 12:
            return None
        if months == int(months):
            return _day_hit(m, _add_months(ref.date(), int(months)))
        return _day_hit(m, ref.date() + timedelta(days=round(months * 30)))
    days = amount * {"minute": 1 / 1440, "hour": 1 / 24, "day": 1, "week": 7}[unit]
    if abs(days) > _MAX_YEARS * 366:
        return None
    if unit in {"day", "week"} and days == int(days):
        return _day_hit(m, ref.date() + timedelta(days=int(days)))
    moment = ref + timedelta(days=days)
    return _Hit(m.start(), m.end(), moment.strftime("%Y-%m-%dT%H:%M"))


def _cn_year(m: re.Match[str]) -> int | None:
    year = parse_number(m.group("y"))
    if year is None:
        return None
    digits = len(m.group("y"))
    if m.group("roc") or digits == 3:
        return int(year) + 1911
    return int(year) if digits == 4 else None


def _numeric_md(day_first: bool) -> _Handler:
    """M/D or M-D (D/M with ``day_first``): see the module docs for the cue rules."""

    def handler(m: re.Match[str], text: str, ref: datetime) -> _Hit | None:
        before = text[max(0, m.start() - 20) : m.start()]
        after_end = min(len(text), m.end() + 16)
        if _NOT_DATE_BEFORE.search(before) or (not m["hao"] and _NOT_DATE_AFTER.match(text, m.end(), after_end)):
            return None
        second = m["d"]
        if (len(second) != 2 or second == "10") and not (
            m["hao"] or _DATE_CUE_BEFORE.search(before) or _DATE_CUE_AFTER.match(text, m.end(), after_end)
        ):
            return None
        month, day = _order(int(m["m"]), int(second), day_first)
        return _day_hit(m, _nearest(ref.date(), month, day))

    return handler


def _safe_date(year: int | None, month: float | None, day: float | None) -> date | None:
    if year is None or month is None or day is None:
        return None
    try:
        return date(year, int(month), int(day))
    except ValueError:
        return None


def _nearest_md(ref: datetime, month: float | None, day: float | None) -> date | None:
    if month is None or day is None or not (1 <= month <= 12):
        return None
    return _nearest(ref.date(), int(month), int(day))


def _month_of(name: str) -> int:
    return _MONTHS[name.lower().rstrip(".")]


def _month_hit(m: re.Match[str], text: str, ref: datetime) -> _Hit | None:
    """Month name with a day and maybe a year; "may" must be written "May" (the verb is not a month)."""
    if m["mon"] == "may" and text[m.start("mon")] != "M":
        return None
    month = _month_of(m["mon"])
    if m.groupdict().get("d") is None:
        return _Hit(m.start(), m.end(), f"{m['y']}-{month:02d}")
    if m["y"]:
        return _day_hit(m, _safe_date(int(m["y"]), month, int(m["d"])))
    return _day_hit(m, _nearest_md(ref, month, int(m["d"])))


def _cn_day(m: re.Match[str], text: str, ref: datetime) -> _Hit | None:
    """今天/明天/昨天/前天/後天/大前天/今晚...; not 之後天氣 ("after that, the weather") or 以前天."""
    word = m[0]
    offset = _CN_DAY_OFFSETS.get(word)
    if offset is None:
        return None
    before, after = text[m.start() - 1 : m.start()], text[m.end() : m.end() + 1]
    if word in {"後天", "后天"} and (before and before in "之以然最" or after and after in "氣气性"):
        return None
    if word == "前天" and before and before in "之以":
        return None
    return _day_hit(m, ref.date() + timedelta(days=offset), word if word[-1] in "晚早夜" else None)


def _weekday_rel(today: date, rel: str, weekday: int) -> date:
    if rel == "coming":
        return today + timedelta(days=(weekday - today.weekday() - 1) % 7 + 1)
    if rel == "past":
        return today - timedelta(days=(today.weekday() - weekday - 1) % 7 + 1)
    return _week_day(today, weekday, _REL_WEEK[rel])


def _period_hit(m: re.Match[str], today: date, offset: int, unit: str) -> _Hit:
    if unit == "week":
        year, week, _ = (today + timedelta(weeks=offset)).isocalendar()
        return _Hit(m.start(), m.end(), f"{year}-W{week:02d}")
    if unit == "month":
        first = _add_months(today.replace(day=1), offset)
        return _Hit(m.start(), m.end(), f"{first.year:04d}-{first.month:02d}")
    return _Hit(m.start(), m.end(), f"{today.year + offset:04d}")


def _cn_year_month(m: re.Match[str]) -> _Hit | None:
    year, month = _cn_year(m), parse_number(m["m"])
    if year is None or month is None or not (1 <= month <= 12) or not (1 <= year <= 9999):
        return None
    return _Hit(m.start(), m.end(), f"{year:04d}-{int(month):02d}")


def _en_day(m: re.Match[str], text: str, ref: datetime) -> _Hit | None:
    word = m["w"]
    offset = _EN_DAY_OFFSETS[word] if word else (2 if m["after"] else -2)
    return _day_hit(m, ref.date() + timedelta(days=offset), "tonight" if word == "tonight" else None)


def _en_weekday(m: re.Match[str], text: str, ref: datetime) -> _Hit | None:
    return _day_hit(m, _weekday_rel(ref.date(), m["rel"], _WEEKDAYS[m["wd"]]))


def _en_period(m: re.Match[str], text: str, ref: datetime) -> _Hit | None:
    return _period_hit(m, ref.date(), _REL_WEEK[m["rel"]], m["u"])


def _en_ago(m: re.Match[str], text: str, ref: datetime) -> _Hit | None:
    return _relative(m, ref, m["n"], m["u"], -1 if m["dir"] == "ago" else 1, False)


def _en_in(m: re.Match[str], text: str, ref: datetime) -> _Hit | None:
    if m["n"] in {"a", "an"} and m["u"].startswith("min"):
        return None  # "back in a minute" means soon, not 60 seconds from now
    return _relative(m, ref, m["n"], m["u"], 1, False)


def _ymd(m: re.Match[str], text: str, ref: datetime) -> _Hit | None:
    return _day_hit(m, _safe_date(int(m["y"]), int(m["m"]), int(m["d"])))


def _order(a: int, b: int, day_first: bool) -> tuple[int, int]:
    """(month, day) of a numeric A?B: a number over 12 is the day whichever it is; otherwise ``day_first`` says."""
    if a > 12 >= b:
        return b, a
    if b > 12 >= a:
        return a, b
    return (b, a) if day_first else (a, b)


def _two_digit_year(yy: str, ref: datetime) -> int:
    """A two-digit year ("3/4/23"): the one of its century nearest to ``ref``'s year."""
    year = ref.year - ref.year % 100 + int(yy)
    return min((year - 100, year, year + 100), key=lambda y: abs(y - ref.year))


def _slash_date(day_first: bool) -> _Handler:
    """A/B/YYYY, A/B/YY, A-B-YYYY: month first (US) or day first (``day_first``, the locale rule); either way a
    number over 12 is the day ("13/05/2023", "05/13/2023")."""

    def handler(m: re.Match[str], text: str, ref: datetime) -> _Hit | None:
        month, day = _order(int(m["m"]), int(m["d"] or m["d2"]), day_first)
        y = m["y"] or m["y2"]
        return _day_hit(m, _safe_date(int(y) if len(y) == 4 else _two_digit_year(y, ref), month, day))

    return handler


def _dotted_date(m: re.Match[str], text: str, ref: datetime) -> _Hit | None:
    """D.M.YYYY ("03.04.2023"): day first, as every locale that writes dates with dots does (month first only
    when the day cannot be the first number, "04.13.2023")."""
    month, day = _order(int(m["a"]), int(m["b"]), True)
    return _day_hit(m, _safe_date(int(m["y"]), month, day))


def _cn_ymd(m: re.Match[str], text: str, ref: datetime) -> _Hit | None:
    return _day_hit(m, _safe_date(_cn_year(m), parse_number(m["m"]), parse_number(m["d"])))


def _cn_md(m: re.Match[str], text: str, ref: datetime) -> _Hit | None:
    return _day_hit(m, _nearest_md(ref, parse_number(m["m"]), parse_number(m["d"])))


def _cn_weekday(m: re.Match[str], text: str, ref: datetime) -> _Hit | None:
    return _day_hit(m, _week_day(ref.date(), _CN_WEEKDAYS[m["wd"]], _REL_WEEK[m["rel"]]))


def _cn_week(m: re.Match[str], text: str, ref: datetime) -> _Hit | None:
    return _period_hit(m, ref.date(), _REL_WEEK[m["rel"]], "week")


def _cn_month(m: re.Match[str], text: str, ref: datetime) -> _Hit | None:
    """下個月 -> YYYY-MM; 下個月15號 -> that day."""
    offset = _REL_WEEK[m["rel"] or m["rel2"]]
    if m["d"] is None:
        return _period_hit(m, ref.date(), offset, "month")
    first = _add_months(ref.date().replace(day=1), offset)
    return _day_hit(m, _safe_date(first.year, first.month, parse_number(m["d"])))


def _cn_year_word(m: re.Match[str], text: str, ref: datetime) -> _Hit | None:
    return _Hit(m.start(), m.end(), f"{ref.year + _CN_YEAR_OFFSETS[m[0]]:04d}")


def _cn_ago(m: re.Match[str], text: str, ref: datetime) -> _Hit | None:
    if m["u"] == "月" and not m["ge"]:
        return None  # 三月前 is "before March"; three months is 三個月
    return _relative(m, ref, m["n"], m["u"], -1 if m["dir"] == "前" else 1, bool(m["half"]))


_Handler = Callable[[re.Match[str], str, datetime], _Hit | None]
_Gate = tuple[str, ...] | re.Pattern[str] | None
"""A cheap test a text passes before a rule's pattern scans it: one of the words is in it, or the pattern
is found. Gates and rule patterns see the lower-cased text."""

_MONTH_PREFIXES = "jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec"
_NUMERIC_GATE = re.compile(r"\d[-/]\d")
_MONTH_DAY_GATE = re.compile(rf"(?:{_MONTH_PREFIXES})[a-z]*\.?,?\s+\d")
_DAY_MONTH_GATE = re.compile(rf"\d(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTH_PREFIXES})")
_IN_GATE = re.compile(r"in\s[^.;!?]{1,25}?(?:min|hour|hr|day|week|month|year)")
_CN_AGO_GATE = re.compile(r"(?:分鐘|分钟|小時|小时|鐘頭|钟头|[天日週周期拜月年])\s?[之以]?\s?[前後后]")
_CN_WEEK_WORDS = ("週", "周", "星期", "禮拜", "礼拜")
_YEAR = r"(?:19|20|21)\d\d"
_CN_REL = r"(?<![晚早一])(?P<rel>下下|上上|下|上|這|这|本)"  # 晚上週會, 看一下周報 are not weeks

_EN_DAY_RE = re.compile(
    r"(?:the\s+day\s+(?P<after>after)\s+tomorrow|the\s+day\s+before\s+yesterday"
    r"|(?P<w>today|tonight|tomorrow|tmrw|tmr|yesterday))\b"
)
_EN_WEEKDAY_RE = re.compile(rf"(?P<rel>next|last|this|coming|past)\s+(?P<wd>{_WEEKDAY_ALT})\b\.?")
_EN_PERIOD_RE = re.compile(r"(?P<rel>next|last|this)\s+(?P<u>week|month|year)\b")
_EN_AGO_RE = re.compile(rf"\b(?P<n>{_NUM})\s+{_EN_UNIT}\s+(?P<dir>ago|from\s+now|from\s+today)\b")
_EN_IN_RE = re.compile(rf"in\s+(?P<n>{_NUM})\s+{_EN_UNIT}\b")
_ISO_RE = re.compile(
    rf"{_NOT_WORD_BEFORE}(?P<y>{_YEAR})(?P<s>[-/])(?P<m>\d{{1,2}})(?P=s)(?P<d>\d{{1,2}})"
    r"(?!(?!t\d)[a-z0-9/%:-]|[.,]\d)"  # "T19:00" may follow
)
_US_RE = re.compile(rf"{_NOT_WORD_BEFORE}(?P<m>\d{{1,2}})(?:/(?P<d>\d{{1,2}})/(?P<y>{_YEAR}|\d\d)"
                    rf"|-(?P<d2>\d{{1,2}})-(?P<y2>{_YEAR})){_NOT_WORD_AFTER}")
_DOTTED_GATE = re.compile(r"\d\.\d{1,2}\.(?:19|20|21)\d\d|(?:19|20|21)\d\d\.\d{1,2}\.\d")
_DOTTED_YMD_RE = re.compile(rf"{_NOT_WORD_BEFORE}(?P<y>{_YEAR})\.(?P<m>\d{{1,2}})\.(?P<d>\d{{1,2}}){_NOT_WORD_AFTER}")
_DOTTED_RE = re.compile(rf"{_NOT_WORD_BEFORE}(?P<a>\d{{1,2}})\.(?P<b>\d{{1,2}})\.(?P<y>{_YEAR}){_NOT_WORD_AFTER}")
_MD_RE = re.compile(
    rf"{_NOT_WORD_BEFORE}(?P<m>\d{{1,2}})[/-](?P<d>\d{{1,2}}){_NOT_WORD_AFTER}(?P<hao>\s?[號号])?"
)
_MONTH_DAY_RE = re.compile(
    rf"(?P<mon>{_MONTH_ALT})\.?\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\b(?!:)(?:,?\s*(?P<y>{_YEAR})\b)?"
)
_DAY_MONTH_RE = re.compile(
    rf"(?:the\s+)?(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<mon>{_MONTH_ALT})\b\.?"
    rf"(?:,?\s*(?P<y>{_YEAR})\b)?"
)
_MONTH_YEAR_RE = re.compile(rf"(?P<mon>{_MONTH_ALT})\.?,?\s+(?P<y>{_YEAR})\b")
_CN_YMD_RE = re.compile(rf"{_CN_YEAR}\s*(?P<m>{_CN_SMALL})\s*月\s*(?P<d>{_CN_SMALL})\s*[日號号]?")
_CN_YM_RE = re.compile(rf"{_CN_YEAR}\s*(?P<m>{_CN_SMALL})\s*月")
_CN_MD_RE = re.compile(rf"(?<![\d年{CN_DIGITS}十])(?P<m>{_CN_SMALL})\s*月\s*(?P<d>{_CN_SMALL})\s*[日號号]")
_CN_DAY_RE = re.compile(r"[大後后前今明昨](?:[前後后]天|[天日晚早夜])")
_CN_WEEKDAY_RE = re.compile(rf"{_CN_REL}\s*{_CN_WEEK}\s*(?P<wd>[一二三四五六日天1-7])")
_CN_WEEK_RE = re.compile(rf"{_CN_REL}\s*{_CN_WEEK}(?![一二三四五六日天1-7末])")  # not 上週末 (weekend)
_CN_MONTH_RE = re.compile(
    rf"(?:{_CN_REL}\s*(?:個|个)\s*月|(?<![晚早一])(?P<rel2>下|上|本)月)(?:\s*(?P<d>{_CN_SMALL})\s*[日號号])?"
)
_CN_YEAR_WORD_RE = re.compile(r"今年|明年|去年|(?<![之以然])[後后]年|前年")
_CN_AGO_RE = re.compile(
    rf"(?<![\d第{CN_DIGITS}十百千萬万])(?<!\d[.,])(?P<n>{MIXED_NUMBER}|半)\s*(?P<ge>個|个)?\s*(?P<half>半)?\s*"
    r"(?P<u>分鐘|分钟|小時|小时|鐘頭|钟头|天|日|週|周|星期|禮拜|礼拜|月|年)\s*(?:之|以)?\s*(?P<dir>前|後|后)(?!往|進|进)"
)

# First characters, for ``scan`` (see there): a rule with one is tried only where its match can begin.
_DIGIT = re.compile(r"\d")
_CN_YEAR_FIRST = re.compile(r"[\d〇零一二三四五六七八九民]")
_CN_NUMBER_FIRST = re.compile(rf"[\d{CN_NUMERAL_CHARS}半]")
_CN_REL_FIRST = re.compile("[下上這这本]")

_RULES: list[
    tuple[_Gate, re.Pattern[str] | None, re.Pattern[str], _Handler]
] = [  # gate, first, pattern, handler
    (("today", "tonight", "tomorrow", "tmr", "yesterday", "the day"), None, _EN_DAY_RE, _en_day),
    (("next", "last", "this", "coming", "past"), None, _EN_WEEKDAY_RE, _en_weekday),
    (("next", "last", "this"), None, _EN_PERIOD_RE, _en_period),
    (("ago", "from"), None, _EN_AGO_RE, _en_ago),
    (_IN_GATE, None, _EN_IN_RE, _en_in),
    (_NUMERIC_GATE, _DIGIT, _ISO_RE, _ymd),
    (_NUMERIC_GATE, _DIGIT, _US_RE, _slash_date(day_first=False)),
    (_DOTTED_GATE, _DIGIT, _DOTTED_RE, _dotted_date),
    (_DOTTED_GATE, _DIGIT, _DOTTED_YMD_RE, _ymd),
    (_NUMERIC_GATE, _DIGIT, _MD_RE, _numeric_md(day_first=False)),
    (_MONTH_DAY_GATE, None, _MONTH_DAY_RE, _month_hit),
    (_DAY_MONTH_GATE, None, _DAY_MONTH_RE, _month_hit),
    (_MONTH_DAY_GATE, None, _MONTH_YEAR_RE, _month_hit),
    (("月",), _CN_YEAR_FIRST, _CN_YMD_RE, _cn_ymd),
    (("月",), _CN_YEAR_FIRST, _CN_YM_RE, lambda m, t, r: _cn_year_month(m)),
    (("月",), _CN_NUMBER_FIRST, _CN_MD_RE, _cn_md),
    (None, None, _CN_DAY_RE, _cn_day),
    (_CN_WEEK_WORDS, _CN_REL_FIRST, _CN_WEEKDAY_RE, _cn_weekday),
    (_CN_WEEK_WORDS, _CN_REL_FIRST, _CN_WEEK_RE, _cn_week),
    (("月",), _CN_REL_FIRST, _CN_MONTH_RE, _cn_month),
    (("年",), None, _CN_YEAR_WORD_RE, _cn_year_word),
    (_CN_AGO_GATE, _CN_NUMBER_FIRST, _CN_AGO_RE, _cn_ago),
]


def _inside_word(text: str, start: int) -> bool:
    """An ASCII letter or digit at ``start`` continues one right before it ("within" does not hold "in")."""
    if start == 0:
        return False
    before, first = text[start - 1], text[start]
    return before.isascii() and before.isalnum() and first.isascii() and first.isalnum()


def _gate_open(gate: _Gate, folded: str) -> bool:
    if gate is None:
        return True
    if isinstance(gate, tuple):
        return any(word in folded for word in gate)
    return gate.search(folded) is not None


def as_aware(ref_time: datetime) -> datetime:
    """``ref_time`` with a timezone: naive means UTC."""
    if ref_time.tzinfo is None or ref_time.utcoffset() is None:
        return ref_time.replace(tzinfo=UTC)
    return ref_time


_DAY_FIRST_HANDLERS = {_US_RE: _slash_date(day_first=True), _MD_RE: _numeric_md(day_first=True)}
_RULES_DAY_FIRST = [(g, f, p, _DAY_FIRST_HANDLERS.get(p, h)) for g, f, p, h in _RULES]


class TemporalNormalizer:
    """Finds dates and date-times in a text and resolves them against a reference time (see module docs).
    ``day_first``: read an ambiguous "A/B/YYYY" as day/month/year (the locale rule; month first by default)."""

    def __init__(self, day_first: bool = False) -> None:
        self._rules = _RULES_DAY_FIRST if day_first else _RULES

    def find(self, text: str, ref_time: datetime) -> list[NormalizedSpan]:
        ref = as_aware(ref_time)
        hits: list[_Hit] = []
        folded = fold_case(text)
        for gate, first, pattern, handler in self._rules:
            if not _gate_open(gate, folded):
                continue
            for match in pattern.finditer(folded) if first is None else scan(first, pattern, folded):
                if _inside_word(folded, match.start()):
                    continue  # the English patterns carry no leading \b (it would slow ``re`` down)
                try:
                    hit = handler(match, text, ref)
                except (ValueError, OverflowError, KeyError):  # out-of-range dates, absurd offsets
                    hit = None
                if hit is not None:
                    hits.append(hit)
        hits.sort(key=lambda h: (h.start, -(h.end - h.start)))
        chosen: list[_Hit] = []
        for hit in hits:
            if not chosen or hit.start >= chosen[-1].end:
                chosen.append(hit)
        spans: list[NormalizedSpan] = []
        floor = 0
        for index, hit in enumerate(chosen):
            limit = chosen[index + 1].start if index + 1 < len(chosen) else len(text)
            spans.append(self._with_time(text, hit, floor, limit))
            floor = spans[-1].end
        return spans

    @staticmethod
    def _with_time(text: str, hit: _Hit, floor: int, limit: int) -> NormalizedSpan:
        start, end, value = hit.start, hit.end, hit.value
        kind: SpanKind = "datetime" if "T" in value else "date"
        if hit.day is not None:
            clock = time_after(text, hit.end, limit, hit.period)
            if clock is None and hit.period is None:
                clock = time_before(text, hit.start, floor)
            if clock is not None:
                try:
                    day = hit.day + timedelta(days=clock.day_shift)
                except OverflowError:
                    day = hit.day
                start, end = min(start, clock.start), max(end, clock.end)
                value, kind = f"{day.isoformat()}T{clock.hour:02d}:{clock.minute:02d}", "datetime"
        return NormalizedSpan(kind, text[start:end], start, end, value, value)
