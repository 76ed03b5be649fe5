"""QueryTimeframe: the window a question names, against its as_of (a Tuesday here)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from app.read.timeframe import QueryTimeframe

AS_OF = datetime(2023, 5, 30, 10, 0, tzinfo=UTC)  # Tuesday


@pytest.mark.parametrize(("query", "start", "end"), [
    ("What game did I finally beat last weekend?", "2023-05-27", "2023-05-29"),  # Saturday to Monday 00:00
    ("Which bike did I service the past weekend?", "2023-05-27", "2023-05-29"),
    ("How many dinner parties have I attended in the past month?", "2023-04-30", "2023-05-30"),  # rolling
    ("What did I do in the past 3 days?", "2023-05-27", "2023-05-30"),
    ("What did I do last week?", "2023-05-22", "2023-05-29"),  # the calendar week (the normalizer's)
    ("What did I do last month?", "2023-04-01", "2023-05-01"),
    ("What did I buy in December?", "2022-12-01", "2023-01-01"),  # the latest December not after as_of
    ("the novels I finished in January and March", "2023-01-01", "2023-04-01"),  # the hull of both
    ("What did Jon find on 1 February, 2023?", "2023-02-01", "2023-02-02"),
    ("What happened two weeks ago?", "2023-05-16", "2023-05-17"),
    ("我上週做了什麼", "2023-05-22", "2023-05-29"),
])
def test_timeframes(query: str, start: str, end: str) -> None:
    tf = QueryTimeframe()(query, AS_OF)
    assert tf is not None and (tf.start.date().isoformat(), tf.end.date().isoformat()) == (start, end)


@pytest.mark.parametrize("query", [
    "What is my dog's name?",
    "May I ask about my trip?",  # "May" here is no month
    "What should I cook this weekend?",  # still to come: no memory is from it
    "What are my plans for next week?",
])
def test_no_timeframe(query: str) -> None:
    assert QueryTimeframe()(query, AS_OF) is None


# --- issue 21: frames that generalize ---------------------------------------------------------------------------

LATE = datetime(2023, 10, 22, 18, 0, tzinfo=UTC)  # a Sunday, after a conversation's last session


@pytest.mark.parametrize(("query", "start", "end"), [
    # a relative expression tied to a date is resolved against that date, not against as_of
    ("When did Caroline give a speech the week before 9 June 2023?", "2023-06-02", "2023-06-09"),
    ("What did Maria participate in last weekend before April 10, 2023?", "2023-04-08", "2023-04-10"),
    ("What is the name of the puppy she got two weeks before August 11, 2023?", "2023-07-28", "2023-08-04"),
    ("Where did they go the Friday before 15 July 2023?", "2023-07-14", "2023-07-15"),
    ("What race did she run the sunday before 25 May 2023?", "2023-05-21", "2023-05-22"),
    ("What did he do the day after 3 June, 2023?", "2023-06-04", "2023-06-05"),
    ("Which trip was the weekend after 1 May 2023?", "2023-05-06", "2023-05-08"),
    ("What happened the week of 23 August 2023?", "2023-08-21", "2023-08-28"),
    ("What did they do two weekends before 17 July 2023?", "2023-07-08", "2023-07-10"),
    # seasons, when a year or a relative word says which one
    ("Where did we hike last summer?", "2023-06-01", "2023-09-01"),
    ("What did John do in the summer of 2022?", "2022-06-01", "2022-09-01"),
    ("去年夏天我們去了哪裡？", "2022-06-01", "2022-09-01"),
    ("this winter's ski trip", "2023-12-01", None),  # still to come: no timeframe (checked below)
    # dates written every way people write them
    ("What happened on 2023-05-08?", "2023-05-08", "2023-05-09"),
    ("What happened on 8 May, 2023?", "2023-05-08", "2023-05-09"),
    ("What happened on May 8th 2023?", "2023-05-08", "2023-05-09"),
    ("What happened on 13/05/2023?", "2023-05-13", "2023-05-14"),  # a first number over 12 is a day
    ("What happened on 05/08/2023?", "2023-05-08", "2023-05-09"),  # month first by default (the locale rule)
    ("2023年5月8日發生了什麼？", "2023-05-08", "2023-05-09"),
    ("What did I do yesterday?", "2023-10-21", "2023-10-22"),
    ("What did I read two weeks ago?", "2023-10-08", "2023-10-09"),
    ("上周我做了什么？", "2023-10-09", "2023-10-16"),
    # seed 000's example: "What's the progress on that OCR project from last week?"
    ("What's the progress on that OCR project from last week?", "2023-10-09", "2023-10-16"),
])
def test_frames_people_write(query: str, start: str, end: str | None) -> None:
    tf = QueryTimeframe()(query, LATE)
    if end is None:
        assert tf is None
        return
    assert tf is not None and (tf.start.date().isoformat(), tf.end.date().isoformat()) == (start, end), tf


def test_the_locale_rule_reads_day_first_dates():
    from app.write.normalize.temporal import TemporalNormalizer

    assert [s.value for s in TemporalNormalizer().find("on 08/05/2023", LATE)] == ["2023-08-05"]
    assert [s.value for s in TemporalNormalizer(day_first=True).find("on 08/05/2023", LATE)] == ["2023-05-08"]
    assert [s.value for s in TemporalNormalizer(day_first=True).find("on 13/05/2023", LATE)] == ["2023-05-13"]


@pytest.mark.parametrize(("query", "expected"), [
    ("When did Jon lose his job as a banker?", True),
    ("When Jon has lost his job as a banker?", True),
    ("What year did John start surfing?", True),
    ("In which month did she adopt Coco?", True),
    ("How long ago was Caroline's 18th birthday?", True),
    ("他什麼時候搬到台南的？", True),
    ("When is Melanie planning on going camping?", False),  # a plan
    ("When do I usually go running?", False),  # a habit
    ("What did Melanie paint?", False),
])
def test_questions_about_when_something_happened(query: str, expected: bool) -> None:
    from app.read.timeframe import asks_when

    assert asks_when(query) is expected
