"""ProportionNormalizer: shares and ratios to a float in [0, 1].

Forms read: "70%", "70 percent", "seventy percent", "百分之七十", "十分之七", "三分之一", "七成", "七成五", "7/10", "seven out
of ten", "half of", "一半", "半數", and a decimal in share context. The token in the canonical text is the float
with at most four decimals ("0.7", "0.3333"). Documented rules:

- A value outside [0, 1] is not a proportion and is left alone ("150%", "24/7", "11 out of 10").
- A decimal ("0.7", ".7", "1.0") is a proportion only in share context: after a share word (ratio, share,
  rate, proportion, fraction, probability, chance, likelihood, odds, percentage, accuracy, precision, recall,
  比例, 比率, 機率, 概率, 佔比, 佔, ...) with at most three filler words between ("of", "is", "about", "~", "為", "約",
  ...), or right before "of" ("0.7 of the budget"). A bare decimal ("version 0.7", "it weighs 0.7 kg") is not
  one.
- "a/b" with integers 0 <= a <= b, b > 0 is a fraction. In the combined normalizer the temporal pass runs
  first, so "3/12" is already a date there (see ``temporal``); "7/10" and "3/4" reach this pass.
- "half" is a proportion only before of / the / my / our / their / his / her / its / your / all / them / us
  ("half of the team", "half the time"); "half an hour" and "two and a half" are left to the duration pass.
- N成 (tenths, 七成 = 0.7, 七成五 = 0.75) is read unless the next character makes it a word or the "probably" sense:
  成功, 成為, 成本, 一成不變, 八成是, 八成會 ... are not proportions.
"""

from __future__ import annotations

import re

from .numerals import (
    CN_NUMBER,
    CN_NUMERAL_CHARS,
    DECIMAL,
    EN_NUMBER,
    MIXED_NUMBER,
    MIXED_NUMBER_BOUNDARY,
    number_start,
    parse_number,
)
from .spans import NormalizedSpan, fold_case, format_number, pick_non_overlapping

_CN_TENTHS = {
    "一": 1,
    "二": 2,
    "兩": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
    "十": 10,
}
_SHARE_WORDS = (
    r"\b(?:ratio|share|rate|proportion|fraction|probability|chance|likelihood|odds|percentage|accuracy"
    r"|precision|recall)\b|比例|比率|機率|机率|概率|佔比|占比|比重|佔|占|率"
)
_FILLERS = (
    r"\b(?:of|is|was|are|were|at|about|around|roughly|approximately|approx)\b\.?"
    r"|~|=|:|為|为|是|約|约|大約|大约|達|达|有"
)

# A percent sign or word, then the number that ends right before it (found by searching backwards from the
# sign, which is much cheaper than trying a number-word pattern at every position of the text).
_PERCENT_SIGN_RE = re.compile(r"%|(?:percent|per\s?cent|pct)\b")
_NUMBER_BEFORE_RE = re.compile(rf"(?<![\d+-])(?<!\d[.,])(?P<n>{DECIMAL}|{CN_NUMBER}|\b{EN_NUMBER})\s?\Z")
_CN_FRACTION_RE = re.compile(rf"{MIXED_NUMBER_BOUNDARY}(?P<b>{MIXED_NUMBER})\s?分之\s?(?P<a>{MIXED_NUMBER})")
_TENTHS_RE = re.compile(
    rf"(?<![\d{''.join(_CN_TENTHS)}百千萬万])(?P<n>[{''.join(_CN_TENTHS)}])成(?P<extra>[一二三四五六七八九](?![成十]))?"
    r"(?![功為为立長长員员本果績绩交熟年語语份分員天群千萬万是會会就又不在要也都吧忘沒没已還还得可能])"
)
_SHARE_DECIMAL_RE = re.compile(
    rf"(?:{_SHARE_WORDS})(?:\s*(?:{_FILLERS})){{0,3}}\s*(?P<n>[01]?\.\d{{1,6}})(?![\d%]|\.\d)",
)
_DECIMAL_OF_RE = re.compile(r"(?<!\d)(?<!\d\.)(?P<n>[01]?\.\d{1,6})(?=\s+of\b)")
_SLASH_RE = re.compile(r"(?<![A-Za-z0-9/:-])(?<!\d\.)(?P<a>\d{1,4})/(?P<b>\d{1,4})(?![A-Za-z0-9/]|\.\d)")
_OUT_OF_RE = re.compile(
    rf"(?<![A-Za-z0-9])(?<!\d[.,])(?P<a>{DECIMAL}|{EN_NUMBER})\s+out\s+of\s+(?P<b>{DECIMAL}|{EN_NUMBER})\b",
)
_HALF_RE = re.compile(
    r"(?<!and\sa\s)\bhalf(?=\s+(?:of|the|my|our|their|his|her|its|your|all|them|us)\b)"
    rf"|(?<![\d{CN_NUMERAL_CHARS}])一半|半[數数]",
)
_DECIMAL_GATE = re.compile(r"\.\d")


def _span(text: str, start: int, end: int, value: float | None) -> NormalizedSpan | None:
    if value is None or not (0.0 <= value <= 1.0):
        return None
    value = round(value, 10)
    return NormalizedSpan("proportion", text[start:end], start, end, value, format_number(value, 4))


def _ratio(numerator: float | None, denominator: float | None) -> float | None:
    if numerator is None or denominator is None or denominator <= 0 or numerator < 0:
        return None
    return numerator / denominator


class ProportionNormalizer:
    """Finds shares and ratios (see module docs for what counts as one)."""

    def find(self, text: str) -> list[NormalizedSpan]:
        found: list[NormalizedSpan | None] = []
        folded = fold_case(text)
        has_decimal = _DECIMAL_GATE.search(folded) is not None
        for sign in _PERCENT_SIGN_RE.finditer(folded):
            m = _NUMBER_BEFORE_RE.search(folded, number_start(folded, sign.start()), sign.start())
            if m is not None:
                found.append(_span(text, m.start(), sign.end(), _ratio(parse_number(m["n"]), 100.0)))
        for m in _CN_FRACTION_RE.finditer(text) if "分之" in text else ():
            found.append(_span(text, m.start(), m.end(), _ratio(parse_number(m["a"]), parse_number(m["b"]))))
        for m in _TENTHS_RE.finditer(text) if "成" in text else ():
            tenths = _CN_TENTHS[m["n"]] + (_CN_TENTHS[m["extra"]] / 10 if m["extra"] else 0)
            found.append(_span(text, m.start(), m.end(), tenths / 10))
        for m in _SHARE_DECIMAL_RE.finditer(folded) if has_decimal else ():
            found.append(_span(text, m.start("n"), m.end("n"), parse_number(m["n"])))
        for m in _DECIMAL_OF_RE.finditer(folded) if has_decimal else ():
            found.append(_span(text, m.start("n"), m.end("n"), parse_number(m["n"])))
        for m in _SLASH_RE.finditer(folded) if "/" in text else ():
            found.append(_span(text, m.start(), m.end(), _ratio(float(m["a"]), float(m["b"]))))
        for m in _OUT_OF_RE.finditer(folded) if "out" in folded else ():
            found.append(_span(text, m.start(), m.end(), _ratio(parse_number(m["a"]), parse_number(m["b"]))))
        for m in _HALF_RE.finditer(folded) if "half" in folded or "半" in text else ():
            found.append(_span(text, m.start(), m.end(), 0.5))
        return pick_non_overlapping(s for s in found if s is not None)
