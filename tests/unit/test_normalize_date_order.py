"""Numeric dates written every way people write them, read month first (the default, as in the US) or day first
(``day_first``, the setting ``MEMVAULT_DAY_FIRST``, as most other places write them)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from app.settings import Settings
from app.write.normalize.temporal import TemporalNormalizer

SAID = datetime(2023, 6, 15, 12, 0, tzinfo=UTC)  # a Thursday


def _values(text: str, day_first: bool) -> list[str]:
    return [str(s.value) for s in TemporalNormalizer(day_first=day_first).find(text, SAID)]


@pytest.mark.parametrize(("text", "month_first", "day_first"), [
    # ambiguous: the setting decides
    ("The dentist is on 03/04/2023.", ["2023-03-04"], ["2023-04-03"]),
    ("Paid rent on 3/4/2023", ["2023-03-04"], ["2023-04-03"]),
    ("Invoice dated 03-04-2023", ["2023-03-04"], ["2023-04-03"]),
    ("Invoice dated 3-4-2023", ["2023-03-04"], ["2023-04-03"]),
    ("Flight booked for 3/4/23", ["2023-03-04"], ["2023-04-03"]),
    ("Party on 11/12/2023 at 8pm", ["2023-11-12T20:00"], ["2023-12-11T20:00"]),
    ("Meeting moved to 07/05", ["2023-07-05"], ["2023-05-07"]),
    ("Due 3/4", ["2023-03-04"], ["2023-04-03"]),
    # a number over 12 is the day, whichever it is and whatever the setting
    ("Born 13/04/1990", ["1990-04-13"], ["1990-04-13"]),
    ("Born 04/13/1990", ["1990-04-13"], ["1990-04-13"]),
    ("Closing on 31/12/2023", ["2023-12-31"], ["2023-12-31"]),
    ("Closing on 12/31/2023", ["2023-12-31"], ["2023-12-31"]),
    ("Christmas is 25/12", ["2022-12-25"], ["2022-12-25"]),  # no year: the nearest 25 December
    # never ambiguous
    ("Deadline 2023-04-03", ["2023-04-03"], ["2023-04-03"]),
    ("Deadline 2023/04/03", ["2023-04-03"], ["2023-04-03"]),
    ("Deadline 2023.04.03", ["2023-04-03"], ["2023-04-03"]),
    ("Termin am 03.04.2023", ["2023-04-03"], ["2023-04-03"]),  # dotted, year last: day first everywhere
    ("On 3 April 2023 we moved", ["2023-04-03"], ["2023-04-03"]),
    ("On April 3, 2023 we moved", ["2023-04-03"], ["2023-04-03"]),
    ("On the 3rd of April we moved", ["2023-04-03"], ["2023-04-03"]),
    ("Apr 3rd, 2023", ["2023-04-03"], ["2023-04-03"]),
    ("2023年4月3日搬家", ["2023-04-03"], ["2023-04-03"]),
    # not dates
    ("We scored 3/4 on the quiz", [], []),
    ("Add 1/2 cup of flour", [], []),
    ("Upgrade to 2.10.3", [], []),
    ("It weighs 3.14 kg", [], []),
    ("Version 2023.04.03.1 is out", [], []),
    ("Not a date: 0/0/2023 or 3/40/2023", [], []),
])
def test_numeric_dates_every_way(text: str, month_first: list[str], day_first: list[str]):
    assert _values(text, False) == month_first
    assert _values(text, True) == day_first


def test_the_setting_defaults_to_month_first_and_reads_the_environment(monkeypatch):
    assert Settings().day_first is False
    monkeypatch.setenv("MEMVAULT_DAY_FIRST", "true")
    assert Settings().day_first is True
