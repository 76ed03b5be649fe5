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
