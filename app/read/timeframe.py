"""QueryTimeframe: the stretch of time a question names ("last weekend", "in the past month", "on 1 February,
2023", "two weeks ago", 上週), resolved against the recall's ``as_of``.

RecencyBoost (stage 1) then measures a memory's age from that window instead of from ``as_of``: a memory from
inside the window gets the whole boost, one from a few days around it most of it (``window_tau_days``), and the
boost is heavier than plain recency (``window_w``), because the user asked about that time.

Dates come from the write track's TemporalNormalizer (days, ISO weeks, months, years, relative offsets, English
and Chinese); a few forms only questions use are read here: "last / past / this weekend", "the past N days /
weeks / months" (rolling, up to ``as_of``), and a bare month ("in December": the latest one not after ``as_of``).
A window that starts after ``as_of`` is no timeframe: no memory is from it (plain recency serves plans).
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
_COUNT = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "few": 3, "couple of": 2}
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}


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


def _weekend(today: date, which: str) -> tuple[datetime, datetime]:
    """This week's Saturday-Sunday, or for last / past / previous the latest one that has ended by today."""
    saturday = today + timedelta(days=5 - today.weekday())  # this calendar week's Saturday
    if which not in ("this", "這", "这") and saturday + timedelta(days=2) > today:
        saturday -= timedelta(days=7)
    return _day(saturday), _day(saturday + timedelta(days=2))


class QueryTimeframe:
    def __init__(self) -> None:
        self._dates = TemporalNormalizer()

    def __call__(self, query: str, as_of: datetime | None) -> Timeframe | None:
        ref = as_aware(as_of or datetime.now(UTC))
        today = ref.date()
        found: list[tuple[datetime, datetime, str]] = []
        for m in _WEEKEND.finditer(query):
            found.append((*_weekend(today, (m[1] or m[0][0]).lower()), m[0]))
        for m in _PAST_SPAN.finditer(query):
            count = (m[1] or m[2] or "").lower()
            n = int(count) if count.isdigit() else _COUNT.get(count, 1)
            unit = m[3].lower().rstrip("s")
            found.append((ref - timedelta(days=n * _UNIT_DAYS[unit]), ref, m[0]))
        for m in _BARE_MONTH.finditer(query):
            month = _MONTHS.index(m[1].lower()) + 1
            year = today.year if month <= today.month else today.year - 1
            found.append((*_span_of(f"{year}-{month:02d}"), m[0]))  # type: ignore[misc]
        taken = [(at, at + len(surface)) for at, surface in ((query.find(f[2]), f[2]) for f in found)]
        for span in self._dates.find(query, ref):
            if any(span.start < end and start < span.end for start, end in taken):
                continue  # "the past month" is the 30 days before as_of, not the calendar month
            window = _span_of(str(span.value))
            if window is not None:
                found.append((*window, span.surface))
        found = [f for f in found if f[0] <= ref]  # a time still to come ("this weekend" asked on a Tuesday)
        if not found:  # dates no memory is from: plain recency serves plans for it
            return None
        return Timeframe(min(f[0] for f in found), max(f[1] for f in found), ", ".join(f[2] for f in found))
