"""ContentNormalizer and its five passes: table-driven cases (English, Chinese, mixed, negatives), properties.

The reference time is Thursday 2026-03-05 10:00 in UTC+8 (ISO week 2026-W10): "next Wednesday" is 2026-03-11.
"""

from __future__ import annotations

import dataclasses
import random
from datetime import UTC, datetime, timedelta, timezone

import pytest

from app.write.normalize import (
    ContentNormalizer,
    CurrencyNormalizer,
    DurationNormalizer,
    NormalizedContent,
    NormalizedSpan,
    ProportionNormalizer,
    TemporalNormalizer,
    preprocess_chinese,
)
from app.write.normalize.numerals import parse_chinese_number, parse_english_number, parse_number

TPE = timezone(timedelta(hours=8))
REF = datetime(2026, 3, 5, 10, 0, tzinfo=TPE)  # a Thursday
REF_DEC = datetime(2025, 12, 20, 9, 0, tzinfo=TPE)  # a Saturday, for year rollover
REF_MON = datetime(2026, 3, 9, 9, 0, tzinfo=TPE)  # a Monday

# ------------------------------------------------------------------------------------------ numerals

NUMERAL_CASES = [
    ("三", 3.0), ("十五", 15.0), ("二十", 20.0), ("一百零五", 105.0), ("三千五", 3500.0), ("兩萬三", 23000.0),
    ("一百五", 150.0), ("3千", 3000.0), ("1.5萬", 15000.0), ("3千5百", 3500.0), ("二〇二六", 2026.0),
    ("三億五千萬", 350_000_000.0), ("两", 2.0), ("3,000", 3000.0), ("twenty-five", 25.0),
    ("one hundred and fifty", 150.0), ("seven", 7.0), ("abc", None), ("", None),
]  # fmt: skip


@pytest.mark.parametrize(("text", "expected"), NUMERAL_CASES)
def test_parse_number(text: str, expected: float | None) -> None:
    assert parse_number(text) == expected


def test_numeral_parsers_reject_garbage() -> None:
    assert parse_chinese_number("三x") is None
    assert parse_english_number("seven apples") is None


# -------------------------------------------------------------------------------- preprocess_chinese

PREPROCESS_CASES = [
    ("ＡＢＣ", "ABC"),
    ("ＡＢＣ公司１２３", "ABC公司123"),
    ("你好，世界！", "你好,世界!"),
    ("真的嗎？是的：好；（備註）", "真的嗎?是的:好;(備註)"),
    ("他說「好」，她說『不』。", "他說\"好\",她說'不'."),
    ("蘋果、香蕉、橘子", "蘋果,香蕉,橘子"),
    ("【重要】等一下…", "[重要]等一下..."),
    ("a\u200bb\u200cc\u200dd\u2060e\ufefff", "abcdef"),
    ("a\u3000\u3000b", "a b"),
    ("  many   spaces\n\tand\r\nlines  ", "many spaces and lines"),
    ("ＮＴ＄３，０００", "NT$3,000"),
    ("７０％", "70%"),
    ("￥１０００", "¥1000"),
    ("《三體》", "《三體》"),
    ("", ""),
    ("😀 ok", "😀 ok"),
]


@pytest.mark.parametrize(("text", "expected"), PREPROCESS_CASES)
def test_preprocess_chinese(text: str, expected: str) -> None:
    assert preprocess_chinese(text) == expected


# ------------------------------------------------------------------------------------------ temporal

TEMPORAL_CASES = [
    # English relative days and weeks
    ("today", REF, [("today", "2026-03-05")]),
    ("yesterday", REF, [("yesterday", "2026-03-04")]),
    ("see you tomorrow!", REF, [("tomorrow", "2026-03-06")]),
    ("the day after tomorrow", REF, [("the day after tomorrow", "2026-03-07")]),
    ("next Wednesday", REF, [("next Wednesday", "2026-03-11")]),
    ("next Wednesday", REF_MON, [("next Wednesday", "2026-03-18")]),
    ("last Friday", REF, [("last Friday", "2026-02-27")]),
    ("this Friday", REF, [("this Friday", "2026-03-06")]),
    ("this coming Friday", REF, [("coming Friday", "2026-03-06")]),
    ("in 3 days", REF, [("in 3 days", "2026-03-08")]),
    ("in three days", REF, [("in three days", "2026-03-08")]),
    ("3 days ago", REF, [("3 days ago", "2026-03-02")]),
    ("2 weeks ago", REF, [("2 weeks ago", "2026-02-19")]),
    ("a week from now", REF, [("a week from now", "2026-03-12")]),
    ("3 months ago", REF, [("3 months ago", "2025-12-05")]),
    ("in 2 hours", REF, [("in 2 hours", "2026-03-05T12:00")]),
    ("next week", REF, [("next week", "2026-W11")]),
    ("last week", REF, [("last week", "2026-W09")]),
    ("last month", REF, [("last month", "2026-02")]),
    ("next month", REF_DEC, [("next month", "2026-01")]),
    ("this year", REF, [("this year", "2026")]),
    # absolute, English and numeric
    ("3/12", REF, [("3/12", "2026-03-12")]),
    ("3-12", REF, [("3-12", "2026-03-12")]),
    ("2026-03-12", REF, [("2026-03-12", "2026-03-12")]),
    ("2026/3/12", REF, [("2026/3/12", "2026-03-12")]),
    ("12/25/2026", REF, [("12/25/2026", "2026-12-25")]),
    ("March 12", REF, [("March 12", "2026-03-12")]),
    ("12 March", REF, [("12 March", "2026-03-12")]),
    ("Mar 12th, 2026", REF, [("Mar 12th, 2026", "2026-03-12")]),
    ("the 12th of March", REF, [("the 12th of March", "2026-03-12")]),
    ("March 2026", REF, [("March 2026", "2026-03")]),
    ("May 5", REF, [("May 5", "2026-05-05")]),
    ("on 7/10", REF, [("7/10", "2026-07-10")]),
    ("due 3/4", REF, [("3/4", "2026-03-04")]),
    # nearest-year rule
    ("Dec 20", REF, [("Dec 20", "2025-12-20")]),
    ("Jan 3", REF_DEC, [("Jan 3", "2026-01-03")]),
    ("on 12/1", REF_DEC, [("12/1", "2025-12-01")]),
    ("12/01", REF_DEC, [("12/01", "2025-12-01")]),
    # with a time of day
    ("dinner next Wednesday at 7pm", REF, [("next Wednesday at 7pm", "2026-03-11T19:00")]),
    ("dinner next Wednesday night at 7", REF, [("next Wednesday night at 7", "2026-03-11T19:00")]),
    ("7pm next Wednesday", REF, [("7pm next Wednesday", "2026-03-11T19:00")]),
    ("tonight at 8", REF, [("tonight at 8", "2026-03-05T20:00")]),
    ("tomorrow at noon", REF, [("tomorrow at noon", "2026-03-06T12:00")]),
    ("March 12 at 9:30 am", REF, [("March 12 at 9:30 am", "2026-03-12T09:30")]),
    ("2026-03-12 19:00", REF, [("2026-03-12 19:00", "2026-03-12T19:00")]),
    ("2026-03-12T19:00:00+08:00", REF, [("2026-03-12T19:00:00+08:00", "2026-03-12T19:00")]),
    ("tomorrow at 7", REF, [("tomorrow", "2026-03-06")]),  # bare hour without a period word: date only
    ("on the 3rd of April at 2 pm.", REF, [("the 3rd of April at 2 pm", "2026-04-03T14:00")]),
    ("tomorrow at 7 p.m.", REF, [("tomorrow at 7 p.m.", "2026-03-06T19:00")]),
    ("Meet at 10:30 tomorrow morning", REF, [("at 10:30 tomorrow", "2026-03-06T10:30")]),
    # Chinese
    ("下週三", REF, [("下週三", "2026-03-11")]),
    ("下周三", REF, [("下周三", "2026-03-11")]),
    ("下個星期三", REF, [("下個星期三", "2026-03-11")]),
    ("下下週三", REF, [("下下週三", "2026-03-18")]),
    ("上週五", REF, [("上週五", "2026-02-27")]),
    ("這週五", REF, [("這週五", "2026-03-06")]),
    ("这个周日", REF, [("这个周日", "2026-03-08")]),
    ("明天", REF, [("明天", "2026-03-06")]),
    ("昨天", REF, [("昨天", "2026-03-04")]),
    ("前天", REF, [("前天", "2026-03-03")]),
    ("後天", REF, [("後天", "2026-03-07")]),
    ("大後天", REF, [("大後天", "2026-03-08")]),
    ("三天後", REF, [("三天後", "2026-03-08")]),
    ("三天后", REF, [("三天后", "2026-03-08")]),
    ("兩週前", REF, [("兩週前", "2026-02-19")]),
    ("两个月以后", REF, [("两个月以后", "2026-05-05")]),
    ("半年前", REF, [("半年前", "2025-09-05")]),
    ("十分鐘前", REF, [("十分鐘前", "2026-03-05T09:50")]),
    ("三月十二日", REF, [("三月十二日", "2026-03-12")]),
    ("3月12日", REF, [("3月12日", "2026-03-12")]),
    ("3月12號", REF, [("3月12號", "2026-03-12")]),
    ("2026年3月12日", REF, [("2026年3月12日", "2026-03-12")]),
    ("民國115年3月12日", REF, [("民國115年3月12日", "2026-03-12")]),
    ("二〇二六年三月", REF, [("二〇二六年三月", "2026-03")]),
    ("下週", REF, [("下週", "2026-W11")]),
    ("上個月", REF, [("上個月", "2026-02")]),
    ("期限是下個月15號", REF, [("下個月15號", "2026-04-15")]),
    ("明年", REF, [("明年", "2027")]),
    ("會議在3/12號", REF, [("3/12號", "2026-03-12")]),
    ("明天晚上7點", REF, [("明天晚上7點", "2026-03-06T19:00")]),
    ("下週三晚上七點半", REF, [("下週三晚上七點半", "2026-03-11T19:30")]),
    ("明天下午3點15分", REF, [("明天下午3點15分", "2026-03-06T15:15")]),
    ("今晚8點", REF, [("今晚8點", "2026-03-05T20:00")]),
    ("明天晚上12點", REF, [("明天晚上12點", "2026-03-07T00:00")]),
    # naive reference time means UTC; the reference's own wall clock is used
    ("tomorrow", datetime(2026, 3, 5, 23, 30), [("tomorrow", "2026-03-06")]),
    ("today", datetime(2026, 3, 5, 23, 30, tzinfo=UTC).astimezone(TPE), [("today", "2026-03-06")]),
    # negatives: versions, scores, fractions, prices, bare weekdays, idioms
    ("Python 3.12 is out", REF, []),
    ("version 1.2.3", REF, []),
    ("we won 3-2", REF, []),
    ("the score was 10-12", REF, []),
    ("7/10", REF, []),
    ("rated 7/10", REF, []),
    ("3/4 of the cake", REF, []),
    ("it costs $3/12 months", REF, []),
    ("call 0912-345-678", REF, []),
    ("pages 3-12", REF, []),
    ("on Friday", REF, []),
    ("週五", REF, []),
    ("you may 5 times", REF, []),
    ("Feb 29", REF, []),
    ("看一下周報", REF, []),
    ("之後天氣很好", REF, []),
    ("我們上週末去了", REF, []),
    ("三月", REF, []),
    ("2026年", REF, []),
    ("back in a minute", REF, []),
]


@pytest.mark.parametrize(("text", "ref", "expected"), TEMPORAL_CASES)
def test_temporal(text: str, ref: datetime, expected: list[tuple[str, str]]) -> None:
    spans = TemporalNormalizer().find(text, ref)
    assert [(s.surface, s.value) for s in spans] == expected
    for span in spans:
        assert span.kind == ("datetime" if "T" in str(span.value) else "date")
        assert text[span.start : span.end] == span.surface


# ------------------------------------------------------------------------------------------ currency

CURRENCY_CASES = [
    ("3,000 NTD", [("3,000 NTD", 3000.0, "TWD")]),
    ("NT$3000", [("NT$3000", 3000.0, "TWD")]),
    ("NT$3,000", [("NT$3,000", 3000.0, "TWD")]),
    ("NT$ 5萬", [("NT$ 5萬", 50000.0, "TWD")]),
    ("USD 100", [("USD 100", 100.0, "USD")]),
    ("$100", [("$100", 100.0, "USD")]),
    ("$19.99", [("$19.99", 19.99, "USD")]),
    ("US$5", [("US$5", 5.0, "USD")]),
    ("€20", [("€20", 20.0, "EUR")]),
    ("£5", [("£5", 5.0, "GBP")]),
    ("¥1000", [("¥1000", 1000.0, "JPY")]),
    ("¥100元", [("¥100元", 100.0, "CNY")]),
    ("RMB 200", [("RMB 200", 200.0, "CNY")]),
    ("$5k", [("$5k", 5000.0, "USD")]),
    ("$2.5 million", [("$2.5 million", 2_500_000.0, "USD")]),
    ("100 dollars", [("100 dollars", 100.0, "USD")]),
    ("one hundred dollars", [("one hundred dollars", 100.0, "USD")]),
    ("20 euros", [("20 euros", 20.0, "EUR")]),
    ("500 yen", [("500 yen", 500.0, "JPY")]),
    ("三千元", [("三千元", 3000.0, "TWD")]),
    ("3千塊", [("3千塊", 3000.0, "TWD")]),
    ("花了3千塊買鞋", [("3千塊", 3000.0, "TWD")]),
    ("5萬元", [("5萬元", 50000.0, "TWD")]),
    ("兩塊錢", [("兩塊錢", 2.0, "TWD")]),
    ("一百美元", [("一百美元", 100.0, "USD")]),
    ("新台幣三千元", [("新台幣三千元", 3000.0, "TWD")]),
    ("美金100", [("美金100", 100.0, "USD")]),
    ("2萬日圓", [("2萬日圓", 20000.0, "JPY")]),
    ("五百人民币", [("五百人民币", 500.0, "CNY")]),
    # negatives
    ("100 people", []),
    ("5 pounds of flour", []),
    ("三塊蛋糕", []),
    ("SPO三元組", []),
    ("二元分類", []),
    ("echo $PATH", []),
    ("3 kg", []),
]


@pytest.mark.parametrize(("text", "expected"), CURRENCY_CASES)
def test_currency(text: str, expected: list[tuple[str, float, str]]) -> None:
    spans = CurrencyNormalizer().find(text)
    got = [(s.surface, s.value["amount"], s.value["currency"]) for s in spans]  # type: ignore[index]
    assert got == expected
    assert all(s.kind == "money" for s in spans)


def test_currency_defaults_are_configurable() -> None:
    normalizer = CurrencyNormalizer(dollar_currency="TWD", yen_sign_currency="CNY", yuan_currency="CNY")
    values = [s.value for s in normalizer.find("$100, ¥50, 三千元")]
    assert values == [
        {"amount": 100.0, "currency": "TWD"},
        {"amount": 50.0, "currency": "CNY"},
        {"amount": 3000.0, "currency": "CNY"},
    ]


# ------------------------------------------------------------------------------------------ proportion

PROPORTION_CASES = [
    ("70%", [("70%", 0.7)]),
    ("12.5%", [("12.5%", 0.125)]),
    ("70 percent", [("70 percent", 0.7)]),
    ("seventy percent", [("seventy percent", 0.7)]),
    ("七成", [("七成", 0.7)]),
    ("七成五", [("七成五", 0.75)]),
    ("七成的人", [("七成", 0.7)]),
    ("百分之七十", [("百分之七十", 0.7)]),
    ("十分之七", [("十分之七", 0.7)]),
    ("三分之一", [("三分之一", 0.3333333333)]),
    ("a ratio of 0.7", [("0.7", 0.7)]),
    ("the probability is about 0.35", [("0.35", 0.35)]),
    ("accuracy 0.92 and recall of 0.8.", [("0.92", 0.92), ("0.8", 0.8)]),
    ("0.7 of the budget", [("0.7", 0.7)]),
    ("成功率達0.85", [("0.85", 0.85)]),
    ("7/10", [("7/10", 0.7)]),
    ("3/4", [("3/4", 0.75)]),
    ("seven out of ten", [("seven out of ten", 0.7)]),
    ("9 out of 10 dentists", [("9 out of 10", 0.9)]),
    ("half of the team", [("half", 0.5)]),
    ("half the time", [("half", 0.5)]),
    ("一半的人", [("一半", 0.5)]),
    ("半數以上", [("半數", 0.5)]),
    # negatives
    ("150%", []),
    ("-5%", []),
    ("24/7", []),
    ("11 out of 10", []),
    ("version 0.7", []),
    ("it weighs 0.7 kg", []),
    ("an accurate 0.7 reading", []),
    ("half an hour", []),
    ("two and a half hours", []),
    ("一成不變", []),
    ("他八成是忘了", []),
    ("完成了", []),
    ("/usr/1/2", []),
]


@pytest.mark.parametrize(("text", "expected"), PROPORTION_CASES)
def test_proportion(text: str, expected: list[tuple[str, float]]) -> None:
    spans = ProportionNormalizer().find(text)
    assert [(s.surface, s.value) for s in spans] == expected
    assert all(s.kind == "proportion" and 0.0 <= s.value <= 1.0 for s in spans)  # type: ignore[operator]


# ------------------------------------------------------------------------------------------ duration

DURATION_CASES = [
    ("two and a half hours", [("two and a half hours", "PT2H30M")]),
    ("2.5h", [("2.5h", "PT2H30M")]),
    ("150 min", [("150 min", "PT2H30M")]),
    ("1h30m", [("1h30m", "PT1H30M")]),
    ("2h15m30s", [("2h15m30s", "PT2H15M30S")]),
    ("90 seconds", [("90 seconds", "PT1M30S")]),
    ("3 days", [("3 days", "P3D")]),
    ("2 weeks", [("2 weeks", "P14D")]),
    ("an hour and a half", [("an hour and a half", "PT1H30M")]),
    ("half an hour", [("half an hour", "PT30M")]),
    ("half a day", [("half a day", "PT12H")]),
    ("1.5 days", [("1.5 days", "P1DT12H")]),
    ("1 hour and 30 minutes", [("1 hour and 30 minutes", "PT1H30M")]),
    ("3 months and 2 weeks", [("3 months and 2 weeks", "P3M14D")]),
    ("twenty minutes", [("twenty minutes", "PT20M")]),
    ("5 hrs", [("5 hrs", "PT5H")]),
    ("兩個半小時", [("兩個半小時", "PT2H30M")]),
    ("半小時", [("半小時", "PT30M")]),
    ("半个小时", [("半个小时", "PT30M")]),
    ("三十分鐘", [("三十分鐘", "PT30M")]),
    ("1.5 小時", [("1.5 小時", "PT1H30M")]),
    ("2小時30分", [("2小時30分", "PT2H30M")]),
    ("一年半", [("一年半", "P1Y6M")]),
    ("一個半月", [("一個半月", "P1M15D")]),
    ("兩個星期", [("兩個星期", "P14D")]),
    ("三個月", [("三個月", "P3M")]),
    ("90秒", [("90秒", "PT1M30S")]),
    ("一刻鐘", [("一刻鐘", "PT15M")]),
    ("三分二十秒", [("三分二十秒", "PT3M20S")]),
    ("一年三個月", [("一年三個月", "P1Y3M")]),
    ("一週五天", [("一週", "P7D"), ("五天", "P5D")]),  # a rate: not joined into 12 days
    ("I work 8 hours a day", [("8 hours", "PT8H")]),
    ("for a week", [("a week", "P7D")]),
    # negatives
    ("30 years old", []),
    ("three times a day", []),
    ("2-3 hours", []),
    ("100m sprint", []),
    ("music of the 90s", []),
    ("3d printing", []),
    ("三月", []),
    ("第三天", []),
    ("2026年", []),
    ("30分", []),
    ("我等了半天", []),
    ("it costs $20 a month", []),
]


@pytest.mark.parametrize(("text", "expected"), DURATION_CASES)
def test_duration(text: str, expected: list[tuple[str, str]]) -> None:
    spans = DurationNormalizer().find(text)
    assert [(s.surface, s.value) for s in spans] == expected
    assert all(s.kind == "duration" for s in spans)


# ------------------------------------------------------------------------------------------ combined

NORMALIZE_CASES = [
    ("dinner next Wednesday at 7pm", REF, "dinner 2026-03-11T19:00"),
    ("2026-03-11 19:00 dinner", REF, "2026-03-11T19:00 dinner"),
    ("下週三晚上七點吃晚餐", REF, "2026-03-11T19:00吃晚餐"),
    ("budget NT$3,000", REF, "budget 3000 TWD"),
    ("預算ＮＴ＄３，０００", REF, "預算3000 TWD"),
    ("70%", REF, "0.7"),
    ("７０％的人", REF, "0.7的人"),
    ("70%off", REF, "0.7 off"),
    ("two and a half hours", REF, "PT2H30M"),
    ("大概兩個半小時。", REF, "大概PT2H30M."),
    ("ＡＢＣ and ABC", REF, "ABC and ABC"),
    ("3 days ago I worked for 3 days", REF, "2026-03-02 I worked for P3D"),
    ("in 3 days, not within 3 days", REF, "2026-03-08, not within P3D"),
    ("Meeting 3/12; the 7/10 score", REF, "Meeting 2026-03-12; the 0.7 score"),
    ("it took 2 hours, and 2 hours ago I left", REF, "it took PT2H, and 2026-03-05T08:00 I left"),
    ("三天後付三千元", REF, "2026-03-08付3000 TWD"),
    ("他說好。3天後見，兩個半小時", REF, "他說好.2026-03-08見,PT2H30M"),
    ("好，70%的人", REF, "好,0.7的人"),
    (
        "我們下週三晚上七點在台北吃飯，預算三千元，大概兩個半小時。",
        REF,
        "我們2026-03-11T19:00在台北吃飯,預算3000 TWD,大概PT2H30M.",
    ),
    ("七成的人覺得半小時太短", REF, "0.7的人覺得PT30M太短"),
    ("Let's meet 明天下午3點 with $50", REF, "Let's meet 2026-03-06T15:00 with 50 USD"),
    ("v3.12 scored 3-2, 1/2 done", REF, "v3.12 scored 3-2, 0.5 done"),
    ("nothing to see here", REF, "nothing to see here"),
    ("", REF, ""),
]


@pytest.mark.parametrize(("text", "ref", "expected"), NORMALIZE_CASES)
def test_normalize_text(text: str, ref: datetime, expected: str) -> None:
    result = ContentNormalizer().normalize(text, ref)
    assert result.text == expected
    assert result.original == text


def test_normalize_spans_and_offsets() -> None:
    result = ContentNormalizer().normalize("ＡＢＣ：下週三晚上7點，預算NT$3,000，七成的人，兩個半小時", REF)
    assert result.preprocessed == "ABC:下週三晚上7點,預算NT$3,000,七成的人,兩個半小時"
    assert [(s.kind, s.surface, s.value) for s in result.spans] == [
        ("datetime", "下週三晚上7點", "2026-03-11T19:00"),
        ("money", "NT$3,000", {"amount": 3000.0, "currency": "TWD"}),
        ("proportion", "七成", 0.7),
        ("duration", "兩個半小時", "PT2H30M"),
    ]
    for span in result.spans:
        assert result.preprocessed[span.start : span.end] == span.surface


def test_dedup_pair_converges() -> None:
    """The seed's example: both phrasings of the same dinner yield the same date-time token."""
    normalizer = ContentNormalizer()
    a = normalizer.normalize("dinner next Wednesday at 7pm", REF).text
    b = normalizer.normalize("2026-03-11 19:00 dinner", REF).text
    c = normalizer.normalize("下週三晚上七點晚餐", REF).text
    assert "2026-03-11T19:00" in a and "2026-03-11T19:00" in b and "2026-03-11T19:00" in c


def test_result_types_are_frozen_and_hashable() -> None:
    result = ContentNormalizer().normalize("budget NT$3,000 tomorrow", REF)
    assert isinstance(result, NormalizedContent) and all(isinstance(s, NormalizedSpan) for s in result.spans)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.text = "x"  # type: ignore[misc]
    assert hash(result) == hash(ContentNormalizer().normalize("budget NT$3,000 tomorrow", REF))


def _random_text(rnd: random.Random) -> str:
    pieces = ["3/12", "下週三", "NT$", "3,000", "70%", "半", "小時", "ago", "next ", "in ", "days", "元", "成",
              "年", "月", "日", "點", "½", "\u200b", "\ufeff", "\u3000", "\x00", "\ud800", "😀", "\U0010ffff",
              "$", "/"]  # fmt: skip
    out = []
    for _ in range(rnd.randint(0, 40)):
        roll = rnd.random()
        if roll < 0.3:
            out.append(rnd.choice(pieces))
        elif roll < 0.6:
            out.append(chr(rnd.randint(0, 0x10FFFF)))
        else:
            out.append(chr(rnd.randint(0x20, 0x7E)))
    return "".join(out)


REFS = [REF, datetime(1, 1, 1), datetime(9999, 12, 31, 23, 59, tzinfo=timezone(timedelta(hours=14))), REF_DEC]


def test_fuzz_never_raises_and_keeps_invariants() -> None:
    rnd = random.Random(20260305)
    normalizer = ContentNormalizer()
    for i in range(3000):
        text = _random_text(rnd)
        result = normalizer.normalize(text, REFS[i % len(REFS)])
        assert result.original is text
        end = 0
        for span in result.spans:
            assert span.start >= end and span.end > span.start
            assert result.preprocessed[span.start : span.end] == span.surface
            end = span.end


@pytest.mark.parametrize(
    "text",
    ["", " ", "😀" * 50, "\x00\x01\x02\xff\ufffd" * 100, "1/" * 10_000, "三" * 20_000, "1," * 10_000,
     "下週三晚上七點 NT$3,000 70% 兩個半小時 " * 600, "\u200b" * 5_000, "9" * 20_000, "in 99999999999 days"],
)  # fmt: skip
def test_hostile_inputs(text: str) -> None:
    result = ContentNormalizer().normalize(text, REF)
    assert result.original == text


def test_extreme_reference_times() -> None:
    """At the edges of the calendar (year 1, year 9999 at UTC+14) relative times may not resolve, but the
    normalizer neither raises nor breaks its span invariants; at an ordinary time every expression resolves."""
    text = "tomorrow, in 3 days, next week, last month, 3 days ago, 明年, 下週三晚上12點, March 12"
    for ref in REFS:
        result = ContentNormalizer().normalize(text, ref)
        assert result.original == text
        end = 0
        for span in result.spans:
            assert span.start >= end and result.preprocessed[span.start : span.end] == span.surface
            end = span.end
    tokens = [s.token for s in ContentNormalizer().normalize(text, REF).spans]
    assert tokens == ["2026-03-06", "2026-03-08", "2026-W11", "2026-02", "2026-03-02", "2027", "2026-03-12T00:00",
                      "2026-03-12"]


def test_a_typical_mixed_turn() -> None:
    """A 200-character turn mixing Chinese and English: every time, amount, proportion and duration in it.
    (Its speed is measured by ``memvault bench ingest``, the ``normalize`` stage, not asserted here.)"""
    turn = (
        "好的，我們下週三晚上7點在信義區吃飯，預算大概NT$3,000，Let's book dinner next Wednesday at 7pm; "
        "about 70% of the team can come, it should take two and a half hours. 上次3/12的會議只有七成的人到，"
        "大家覺得還可以，下次再約三十分鐘討論細節。"
    )
    assert 180 <= len(turn) <= 220
    spans = ContentNormalizer().normalize(turn, REF).spans
    assert [(s.kind, s.surface, s.token) for s in spans] == [
        ("datetime", "下週三晚上7點", "2026-03-11T19:00"), ("money", "NT$3,000", "3000 TWD"),
        ("datetime", "next Wednesday at 7pm", "2026-03-11T19:00"), ("proportion", "70%", "0.7"),
        ("duration", "two and a half hours", "PT2H30M"), ("date", "3/12", "2026-03-12"),
        ("proportion", "七成", "0.7"), ("duration", "三十分鐘", "PT30M"),
    ]
