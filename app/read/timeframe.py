"""QueryTimeframe: the stretch of time a question names ("last weekend", "in the past month", "on 1 February,
2023", "two weeks ago", 上週), resolved against the recall's ``as_of``.

RecencyBoost (stage 1) then measures a memory's age from that window instead of from ``as_of``: a memory from
inside the window gets the whole boost, one from a few days around it most of it (``window_tau_days``), and the
boost is heavier than plain recency (``window_w``), because the user asked about that time.

Dates come from the write track's TemporalNormalizer (days, ISO weeks, months, years, relative offsets, English
and Chinese); a few forms only questions use are read here: "last / past / this weekend", "the past N days /
weeks / months" (rolling, up to ``as_of``), and a bare month ("in December": the latest one not after ``as_of``).
A window that starts after ``as_of`` is no timeframe: no memory is from it (plain recency serves plans).

A relative expression tied to a date is resolved against that date, not against ``as_of``: "the week before
August 3, 2023" is 27 July - 3 August, "two weeks before 11 August" the week of 28 July, "the Friday before
15 July" that Friday, "the weekend after 1 May" the weekend that follows it, "the week of 23 August" its ISO week.
Seasons are read when a year or a relative word says which one ("last summer", "the summer of 2022", 去年夏天):
spring March-May, summer June-August, autumn September-November, winter December-February (northern hemisphere).
Scoring then counts a memory as inside the window when it was said in it or names a date in it (the dates the
write track normalized in its text, resolved against when it was said), and ignores a window no candidate is near
(sql/idempotent/070-scoring.sql): a frame that cannot be read against the memories changes nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from app.write.normalize.temporal import TemporalNormalizer, as_aware

_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_WEEKEND = re.compile(r"\b(last|past|previous|this)\s+weekend\b|上(?:個|个)?(?:週末|周末)|這(?:個)?週末|这(?:个)?周末",
                      re.I)
# "the past month", "past 3 days", "the last few weeks": a rolling span up to as_of ("last month" alone is the
# calendar month, the normalizer's).
_PAST_SPAN = re.compile(r"\b(?:the\s+)?(?:(?:past|previous)\s+(?:(\d+|two|three|four|five|six|few|couple of)\s+)?"
                        r"|last\s+(\d+|two|three|four|five|six|few|couple of)\s+)(days?|weeks?|months?|years?)\b",
                        re.I)
_BARE_MONTH = re.compile(r"\b(?:in|during|since|back in|and|or)\s+(" + "|".join(m.capitalize() for m in _MONTHS) +
                         r")\b(?!\s*,?\s*\d)")
_COUNT = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "few": 3, "couple of": 2, "a": 1, "an": 1,
          "one": 1}
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
# "<N> <unit> before|after" right before a date: the relative part of an anchored expression.
_ANCHORED = re.compile(
    r"(?:\b(?:the|last|previous|past|a|an|on|in|during|over)\s+)?"
    r"(?:(?P<n>\d+|a|an|one|two|three|four|five|six|few|couple of)\s+)?"
    r"(?P<unit>days?|nights?|weeks?|weekends?|months?|years?|" + "|".join(f"{d}s?" for d in _WEEKDAYS) + r")"
    r"\s+(?P<dir>before|prior\s+to|after|following)\s+(?:the\s+)?$", re.I)
_CONTAINING = re.compile(r"(?:\b(?:the|in|during|over)\s+)?\b(?P<unit>week|weekend)\s+of\s+(?:the\s+)?$", re.I)
_SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12, "春": 3, "夏": 6, "秋": 9, "冬": 12}
_SEASON = re.compile(
    r"\b(?:(?P<rel>last|this|past|previous)\s+(?P<s1>spring|summer|autumn|fall|winter)\b"
    r"|(?:the\s+)?(?P<s2>spring|summer|autumn|fall|winter)\s+(?:of\s+)?(?P<y>(?:19|20)\d\d)\b)"
    r"|(?P<cnrel>去年|今年|前年)(?P<s3>[春夏秋冬])(?:天|季)"
    r"|(?P<cny>(?:19|20)\d\d)年(?P<s4>[春夏秋冬])(?:天|季)", re.I)
_CN_YEARS = {"去年": -1, "今年": 0, "前年": -2}


@dataclass(frozen=True, slots=True)
class Timeframe:
    start: datetime
    end: datetime
    surface: str

    def params(self) -> dict[str, str]:
        """The scoring config's keys (stage 1 reads them)."""
        return {"window_start": self.start.isoformat(), "window_end": self.end.isoformat()}

    def meta(self) -> dict[str, str]:
        """What a recall's meta reports."""
        return {"start": self.start.isoformat(), "end": self.end.isoformat(), "said": self.surface}


# A question about when something happened ("When did Jon lose his job?", "What year did she move?", "How long
# ago was...", 什麼時候, 哪一年): its answer is an event's time, so recall need not prefer what was said lately
# (ScoringConfig.when_recency_w / when_decay_w). "When is / are / will / do" asks about plans or habits and stays
# as it is.
_WHEN = re.compile(r"^\W*(?:when\s+(?!(?:is|are|will|would|should|shall|can|do|does)\b)\w|(?:in\s+)?(?:what|which)\s+(?:year|month|day|date)\b"
                   r"|how\s+long\s+ago\b|since\s+when\b)"
                   r"|什麼時候|什么时候|何時|何时|哪一年|哪年|幾月|几月|哪一天", re.I)


def asks_when(query: str) -> bool:
    """Whether ``query`` asks when something happened (see ``_WHEN``)."""
    return _WHEN.search(query) is not None


def _day(d: date) -> datetime:
    return datetime.combine(d, time(), tzinfo=UTC)


def _span_of(value: str) -> tuple[datetime, datetime] | None:
    """An ISO value of the normalizer (day, date-time, week, month, year) as a half-open window."""
    if m := re.fullmatch(r"(\d{4})-W(\d{2})", value):
        monday = date.fromisocalendar(int(m[1]), int(m[2]), 1)
        return _day(monday), _day(monday + timedelta(days=7))
    if m := re.fullmatch(r"(\d{4})-(\d{2})", value):
        y, mo = int(m[1]), int(m[2])
        return _day(date(y, mo, 1)), _day(date(y + (mo == 12), mo % 12 + 1, 1))
    if re.fullmatch(r"\d{4}", value):
        return _day(date(int(value), 1, 1)), _day(date(int(value) + 1, 1, 1))
    if m := re.match(r"(\d{4}-\d{2}-\d{2})", value):
        d = date.fromisoformat(m[1])
        return _day(d), _day(d + timedelta(days=1))
    return None


def _season(start_month: int, year: int) -> tuple[datetime, datetime]:
    start = date(year, start_month, 1)
    end_month = start_month + 3
    end = date(year + (end_month > 12), (end_month - 1) % 12 + 1, 1)
    return _day(start), _day(end)


def _season_window(m: re.Match[str], today: date) -> tuple[datetime, datetime] | None:
    name = (m["s1"] or m["s2"] or m["s3"] or m["s4"]).lower()
    first = _SEASONS[name]
    if m["y"] or m["cny"]:
        return _season(first, int(m["y"] or m["cny"]))
    if m["cnrel"]:
        return _season(first, today.year + _CN_YEARS[m["cnrel"]])
    # "this summer": the one of today's year (winter: the one that began last December when today is before
    # March); "last / past / previous summer": the latest one that has ended by today
    year = today.year - (first == 12 and today.month < 3)
    if m["rel"].lower() == "this":
        return _season(first, year)
    start, end = _season(first, year)
    while end.date() > today:
        start, end = _season(first, start.year - 1)
    return start, end


def _count(text: str | None) -> int:
    if not text:
        return 1
    return int(text) if text.isdigit() else _COUNT.get(text.lower(), 1)


def _anchored(m: re.Match[str], start: datetime, end: datetime) -> tuple[datetime, datetime]:
    """The window of "<N> <unit> before / after <the date [start, end)>"."""
    n = _count(m["n"])
    unit = m["unit"].lower().rstrip("s")
    before = m["dir"].lower().startswith(("before", "prior"))
    day = timedelta(days=1)
    if unit in ("day", "night"):
        return (start - n * day, start - (n - 1) * day) if before else (end + (n - 1) * day, end + n * day)
    if unit == "week":
        return (start - 7 * n * day, start - 7 * (n - 1) * day) if before else \
            (end + 7 * (n - 1) * day, end + 7 * n * day)
    if unit in ("month", "year"):
        months = n * (12 if unit == "year" else 1)
        if before:
            return _day(_add_months(start.date(), -months)), _day(_add_months(start.date(), -months + 1)) \
                if unit == "month" else _day(_add_months(start.date(), -months + 12))
        return _day(_add_months(end.date(), months - (1 if unit == "month" else 12))), \
            _day(_add_months(end.date(), months))
    if unit == "weekend":
        if before:  # the Saturday of the latest weekend that has ended by the anchor
            saturday = start.date() - timedelta(days=(start.date().weekday() - 5) % 7 or 7)
            if saturday + timedelta(days=2) > start.date():
                saturday -= timedelta(days=7)
            saturday -= timedelta(days=7 * (n - 1))
        else:
            saturday = end.date() + timedelta(days=(5 - end.date().weekday()) % 7)
            saturday += timedelta(days=7 * (n - 1))
        return _day(saturday), _day(saturday + timedelta(days=2))
    weekday = _WEEKDAYS.index(unit)
    if before:
        d = start.date() - timedelta(days=(start.date().weekday() - weekday - 1) % 7 + 1) - timedelta(days=7 * (n - 1))
    else:
        d = end.date() + timedelta(days=(weekday - end.date().weekday()) % 7) + timedelta(days=7 * (n - 1))
    return _day(d), _day(d + day)


def _add_months(d: date, months: int) -> date:
    index = d.year * 12 + d.month - 1 + months
    return date(index // 12, index % 12 + 1, 1)


def _weekend(today: date, which: str) -> tuple[datetime, datetime]:
    """This week's Saturday-Sunday, or for last / past / previous the latest one that has ended by today."""
    saturday = today + timedelta(days=5 - today.weekday())  # this calendar week's Saturday
    if which not in ("this", "這", "这") and saturday + timedelta(days=2) > today:
        saturday -= timedelta(days=7)
    return _day(saturday), _day(saturday + timedelta(days=2))


def _anchored_weekend_of(start: datetime) -> tuple[datetime, datetime]:
    """"the weekend of <date>": the Saturday-Sunday of that date's week."""
    saturday = start.date() - timedelta(days=start.date().weekday()) + timedelta(days=5)
    return _day(saturday), _day(saturday + timedelta(days=2))


class QueryTimeframe:
    """``day_first``: how the question's ambiguous numeric dates are read (the setting ``day_first``, as the write
    track reads the memories')."""

    def __init__(self, day_first: bool = False) -> None:
        self._dates = TemporalNormalizer(day_first=day_first)

    def __call__(self, query: str, as_of: datetime | None) -> Timeframe | None:
        ref = as_aware(as_of or datetime.now(UTC))
        today = ref.date()
        found: list[tuple[datetime, datetime, str]] = []
        consumed: list[tuple[int, int]] = []  # anchored expressions: their relative words are read already
        spans = [(sp, w) for sp in self._dates.find(query, ref) if (w := _span_of(str(sp.value))) is not None]
        for span, (start, end) in spans:
            head = query[max(0, span.start - 60):span.start]
            if (m := _ANCHORED.search(head)) is not None:
                found.append((*_anchored(m, start, end), query[span.start - len(head) + m.start():span.end]))
            elif (m := _CONTAINING.search(head)) is not None:
                if m["unit"].lower() == "week":
                    monday = start.date() - timedelta(days=start.date().weekday())
                    found.append((_day(monday), _day(monday + timedelta(days=7)),
                                  query[span.start - len(head) + m.start():span.end]))
                else:
                    found.append((*_anchored_weekend_of(start), query[span.start - len(head) + m.start():span.end]))
            else:
                continue
            consumed.append((span.start - len(head) + m.start(), span.end))

        def free(a: int, b: int) -> bool:
            return not any(a < e and s < b for s, e in consumed)

        for m in _SEASON.finditer(query):
            if free(m.start(), m.end()) and (w := _season_window(m, today)) is not None:
                found.append((*w, m[0]))
                consumed.append((m.start(), m.end()))
        for m in _WEEKEND.finditer(query):
            if not free(m.start(), m.end()):
                continue
            found.append((*_weekend(today, (m[1] or m[0][0]).lower()), m[0]))
        for m in _PAST_SPAN.finditer(query):
            if not free(m.start(), m.end()):
                continue
            count = (m[1] or m[2] or "").lower()
            n = int(count) if count.isdigit() else _COUNT.get(count, 1)
            unit = m[3].lower().rstrip("s")
            found.append((ref - timedelta(days=n * _UNIT_DAYS[unit]), ref, m[0]))
        for m in _BARE_MONTH.finditer(query):
            if not free(m.start(), m.end()):
                continue
            month = _MONTHS.index(m[1].lower()) + 1
            year = today.year if month <= today.month else today.year - 1
            found.append((*_span_of(f"{year}-{month:02d}"), m[0]))  # type: ignore[misc]
        taken = [*consumed, *((at, at + len(surface)) for at, surface in ((query.find(f[2]), f[2]) for f in found))]
        for span, window in spans:
            if any(span.start < end and start < span.end for start, end in taken):
                continue  # "the past month" is the 30 days before as_of, not the calendar month
            found.append((*window, span.surface))
        found = [f for f in found if f[0] <= ref]  # a time still to come ("this weekend" asked on a Tuesday)
        if not found:  # dates no memory is from: plain recency serves plans for it
            return None
        return Timeframe(min(f[0] for f in found), max(f[1] for f in found), ", ".join(f[2] for f in found))
