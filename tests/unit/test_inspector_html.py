"""The inspector's page kit (app/interfaces/inspector_html.py) and the graph picture's text (graph_svg): times to
the minute with how long ago, counts in the right number, names wrapped and ellipsized, text widths never
underestimated for the font the picture names. Table-driven; the browser test checks the same in Chromium."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from app.interfaces.graph_svg import text_width, wrap
from app.interfaces.inspector_html import ago, count, table, td, when

NOW = datetime(2026, 3, 8, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(("delta", "expected"), [
    (timedelta(seconds=0), "just now"), (timedelta(seconds=59), "just now"),
    (timedelta(seconds=60), "1 minute ago"), (timedelta(minutes=2, seconds=59), "2 minutes ago"),
    (timedelta(hours=1), "1 hour ago"), (timedelta(hours=23, minutes=59), "23 hours ago"),
    (timedelta(days=1), "1 day ago"), (timedelta(days=3), "3 days ago"), (timedelta(days=7), "1 week ago"),
    (timedelta(days=29), "4 weeks ago"), (timedelta(days=30), "1 month ago"), (timedelta(days=364), "12 months ago"),
    (timedelta(days=365), "1 year ago"), (timedelta(days=800), "2 years ago"),
    (-timedelta(days=6, hours=23), "in 6 days"), (-timedelta(minutes=1), "in 1 minute"),
])
def test_how_long_ago(delta, expected) -> None:
    assert ago(NOW - delta, NOW) == expected


@pytest.mark.parametrize(("n", "one", "many", "expected"), [
    (0, "time", None, "0 times"), (1, "time", None, "1 time"), (2, "time", None, "2 times"),
    (1, "memory", "memories", "1 memory"), (12, "memory", "memories", "12 memories"),
    (None, "entity", "entities", "0 entities"),
])
def test_count_in_the_right_number(n, one, many, expected) -> None:
    assert count(n, one, many) == expected


def test_a_time_to_the_minute_in_utc_with_the_exact_value_in_its_title() -> None:
    said = datetime(2024, 3, 5, 16, 2, 11, 123456, tzinfo=timezone(timedelta(hours=2)))
    html = when(said, now=NOW)
    assert ">2024-03-05 14:02 <small>2 years ago</small></time>" in html  # UTC, to the minute
    assert "title='2024-03-05 14:02:11.123 UTC, 2 years ago'" in html and "datetime='2024-03-05T14:02:11.123456" in html
    assert when("2024-03-05T14:02:00+00:00", now=NOW).startswith("<time datetime='2024-03-05T14:02:00+00:00'")
    assert "title='2024-03-05 14:02:00 UTC" in when("2024-03-05T14:02:00+00:00", now=NOW)  # no fraction when none
    assert when(None) == "" and when("") == ""
    assert when("still <b>true</b>") == "still &lt;b&gt;true&lt;/b&gt;"  # not a time: shown as it is, escaped


def test_every_cell_is_labelled_with_its_column_and_a_row_must_fit_the_header() -> None:
    html = table(["id", "when said", "memory"], [[td(1, num=True), td("x"), td("<i>")]])
    assert "<td data-label='id' class='n'>1</td><td data-label='when said'>x</td>" in html
    assert "&lt;i&gt;" in html and "class='cards'" in html and html.startswith("<div class='tw'>")
    assert "class='cards'" not in table(["field", "value"], [[td("a"), td("b")]])  # two columns stay a table
    with pytest.raises(ValueError):
        table(["a", "b"], [[td(1), td(2), td(3)]])


@pytest.mark.parametrize(("name", "expected"), [
    ("Acme", ["Acme"]), ("", ["?"]), ("Dr. Lin", ["Dr. Lin"]),
    ("Maximilian Alexander Featherstonehaugh-Worthington", ["Maximilian", "Alexander Feather…"]),
    ("Globex Corporation International Holdings", ["Globex Corporation", "International Hol…"]),
    ("WWWWWWWWWWWWWWWWWWWWWWWW", ["WWWWWWWWWWWWWWWWW…"]),
])
def test_names_wrap_on_two_lines_and_ellipsize(name, expected) -> None:
    assert wrap(name) == expected
    assert all(len(line) <= 18 for line in wrap(name))


def test_text_widths_are_upper_estimates_of_dejavu_sans() -> None:
    """DejaVu Sans at 100 px, measured with Pillow (ImageFont.getlength)."""
    measured = {"Hello World": 571.8, "WWW": 296.6, "iii": 83.3, "Maximilian Alexander": 1077.7, "works_at": 444.6}
    for text, width in measured.items():
        assert width <= text_width(text, 100) < width * 1.12, text  # an upper estimate, not a wild one
    assert text_width("台北", 12) >= 2 * 12  # a wide character: a whole em
