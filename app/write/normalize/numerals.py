"""Numbers written as digits, Chinese numerals or English words, shared by the normalizer passes.

Chinese numerals (traditional and simplified): digits 零〇一二兩两三四五六七八九 (and the financial forms 壹貳贰參叁肆伍陸陆柒捌玖),
units 十百千 (拾佰仟), big units 萬万 (10^4) and 億亿 (10^8), freely mixed with Arabic digits ("3千", "1.5萬", "3千5百").
Documented rules:

- a digit run without units is positional: "二〇二六" is 2026;
- an elided trailing unit is one step below the last unit: "三千五" is 3500, "兩萬三" is 23000, "一百五" is 150; after
  零 nothing is elided ("一百零五" is 105);
- a leading unit means one of it: "十五" is 15.

English: zero .. nineteen, twenty .. ninety (with "-" or space: "twenty-five"), "hundred", "thousand", "and"
ignored ("one hundred and fifty"). The articles "a"/"an" are *not* numbers here; callers that accept them say
so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

DECIMAL = r"(?:\d{1,3}(?:,\d{3})+|\d{1,12})(?:\.\d{1,6})?"
"""Arabic number: optional thousands grouping with "," (exactly three digits per group), optional decimals."""

_CN_DIGIT_VALUES = {
    "零": 0, "〇": 0, "一": 1, "二": 2, "兩": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
    "九": 9, "壹": 1, "貳": 2, "贰": 2, "參": 3, "叁": 3, "肆": 4, "伍": 5, "陸": 6, "陆": 6, "柒": 7, "捌": 8,
    "玖": 9,
}  # fmt: skip
_CN_UNIT_VALUES = {"十": 10, "拾": 10, "百": 100, "佰": 100, "千": 1000, "仟": 1000}
_CN_BIG_VALUES = {"萬": 10_000, "万": 10_000, "億": 100_000_000, "亿": 100_000_000}

CN_DIGITS = "".join(_CN_DIGIT_VALUES)
CN_NUMERAL_CHARS = CN_DIGITS + "".join(_CN_UNIT_VALUES) + "".join(_CN_BIG_VALUES)

CN_NUMBER = rf"[{CN_NUMERAL_CHARS}]{{1,12}}"
"""Chinese numerals only ("三千五百", "十二", "兩")."""

MIXED_NUMBER = (
    rf"(?:{DECIMAL}[{CN_NUMERAL_CHARS}\d]{{0,8}}|[{CN_NUMERAL_CHARS}][{CN_NUMERAL_CHARS}\d]{{0,11}})"
)
"""Arabic, Chinese or both ("3千", "1.5萬", "3,000", "三千五")."""

MIXED_NUMBER_BOUNDARY = rf"(?<![\d{CN_NUMERAL_CHARS}])(?<!\d[.,])"
"""Lookbehind: do not start inside another number."""

_EN_ONES = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
}  # fmt: skip
_EN_TENS = {
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
    "ninety": 90,
}  # fmt: skip
_EN_SCALES = {"hundred": 100, "thousand": 1000}


def alternation(words: Iterable[str]) -> str:
    """Regex alternation of literal words, longest first (so "seventeen" is tried before "seven")."""
    return "|".join(sorted((re.escape(word) for word in words), key=len, reverse=True))


_ONES_RE = alternation(list(_EN_ONES))
_TENS_RE = alternation(list(_EN_TENS))
_UNDER_100 = rf"(?:(?:{_TENS_RE})(?:[-\s](?:{alternation(list(_EN_ONES)[1:10])}))?|(?:{_ONES_RE}))"
_HUNDREDS = rf"{_UNDER_100}(?:\s+hundred(?:\s+(?:and\s+)?{_UNDER_100})?)?"
EN_NUMBER = rf"(?:{_HUNDREDS}(?:\s+thousand(?:\s+(?:and\s+)?{_UNDER_100})?)?)"
"""English number words up to the thousands ("seven", "twenty-five", "one hundred and fifty"), lower case."""

_SPLIT_WORDS = re.compile(r"[\s-]+")


_NUMBERISH = frozenset("0123456789.,- abcdefghijklmnopqrstuvwxyz" + CN_NUMERAL_CHARS)


def number_start(text: str, end: int, limit: int = 40) -> int:
    """The earliest place a number written just before ``end`` can start.

    That is the start of the run of digits, letters, numerals, spaces and ".,-" that ends at ``end``, at most
    ``limit`` characters back. Searching for the number only from there keeps backward searches cheap on
    hostile input ("%1%1%1...").
    """
    start = end
    floor = max(0, end - limit)
    while start > floor and text[start - 1] in _NUMBERISH:
        start -= 1
    return start


def parse_decimal(text: str) -> float | None:
    """``"3,000.5"`` -> 3000.5; ``None`` when it is not a plain decimal number."""
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def parse_english_number(text: str) -> float | None:
    """``"twenty-five"`` -> 25.0, ``"one hundred and fifty"`` -> 150.0; ``None`` if a word is not a number."""
    total = 0
    current = 0
    seen = False
    for word in _SPLIT_WORDS.split(text.strip().lower()):
        if not word or word == "and":
            continue
        if word in _EN_ONES:
            current += _EN_ONES[word]
        elif word in _EN_TENS:
            current += _EN_TENS[word]
        elif word == "hundred":
            current = (current or 1) * 100
        elif word == "thousand":
            total += (current or 1) * 1000
            current = 0
        else:
            return None
        seen = True
    return float(total + current) if seen else None


def parse_chinese_number(text: str) -> float | None:
    """Chinese (optionally mixed with Arabic) numerals to a number; ``None`` when malformed."""
    total = 0.0  # completed big-unit sections
    section = 0.0  # current section below 萬/億
    current: float | None = None  # pending digits not yet multiplied by a unit
    last_unit = 0  # last unit applied, for elision ("三千五")
    zero_seen = False
    seen = False
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch.isdigit() and ch.isascii():
            j = i
            while j < n and ((text[j].isdigit() and text[j].isascii()) or text[j] in ".,"):
                j += 1
            value = parse_decimal(text[i:j])
            if value is None or current is not None:
                return None
            current = value
            i = j
            seen = True
            continue
        if ch in _CN_DIGIT_VALUES:
            digit = _CN_DIGIT_VALUES[ch]
            if digit == 0:
                zero_seen = True
            # a digit right after a digit is positional ("二〇二六")
            current = digit if current is None else current * 10 + digit
        elif ch in _CN_UNIT_VALUES:
            unit = _CN_UNIT_VALUES[ch]
            section += (1 if current is None else current) * unit
            current = None
            last_unit = unit
            zero_seen = False
        elif ch in _CN_BIG_VALUES:
            big = _CN_BIG_VALUES[ch]
            section += current or 0
            if section == 0 and total > 0:
                total *= big  # "一萬億"
            else:
                section = section or 1
                total = (total + section) * big if big > 10_000 else total + section * big
            section = 0.0
            current = None
            last_unit = big
            zero_seen = False
        else:
            return None
        seen = True
        i += 1
    if not seen:
        return None
    if current is not None:
        if last_unit >= 10 and not zero_seen and current < 10:
            current = current * last_unit / 10  # elided unit
        section += current
    return total + section


def parse_number(text: str) -> float | None:
    """Digits, Chinese numerals (mixed allowed) or English words; ``None`` when it is none of them."""
    text = text.strip()
    if not text:
        return None
    value = parse_decimal(text)
    if value is not None:
        return value
    if text[0].isascii() and text[0].isalpha():
        return parse_english_number(text)
    return parse_chinese_number(text)
