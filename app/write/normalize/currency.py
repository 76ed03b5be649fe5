"""CurrencyNormalizer: money amounts to ``{"amount": float, "currency": ISO-4217 code}``; no FX conversion.

Forms read: a symbol or code before the amount ("NT$3,000", "US$5", "USD 100", "€20", "£5", "¥1000", "$5k",
"NT$5萬"), a code or word after it ("3,000 NTD", "100 dollars", "20 euros", "500 yen"), and Chinese ("三千元",
"3千塊", "5萬元", "一百美元", "新台幣三千元", "2萬日圓"). The token in the canonical text is ``"<amount> <CODE>"`` ("3000
TWD"). Documented rules:

- "$" and "dollar(s)"/"bucks" without a country mean ``dollar_currency`` (default USD); "NT$", "NT dollars"
  are TWD.
- "¥" means ``yen_sign_currency`` (default JPY: it is the sign's international reading; CNY is written "CN¥",
  "RMB", "人民幣" or with 元 after the amount, "¥100元", which all give CNY).
- 元 / 塊 / 块 (and 塊錢) without a country mean ``yuan_currency`` (default TWD, the deployment's home currency;
  pass "CNY" for mainland users). 元 is not money in 三元組 (triple), 二元 (binary) or 一元二次 (equation); 塊 is money
  only when followed by 錢, by a non-CJK character or the end, or when the amount is at least 100 (三塊蛋糕 is
  three pieces of cake).
- Multipliers: k/K = 10^3, m/M/million = 10^6, bn/billion = 10^9, thousand = 10^3, Chinese 千/萬/万/億/亿.
- "pound(s)" is not read (it is also a weight); "£" is GBP. A bare number is never money.
"""

from __future__ import annotations

import re

from .numerals import (
    CN_NUMERAL_CHARS,
    DECIMAL,
    EN_NUMBER,
    MIXED_NUMBER,
    MIXED_NUMBER_BOUNDARY,
    alternation,
    number_start,
    parse_number,
)
from .spans import NormalizedSpan, fold_case, format_number, pick_non_overlapping, scan

_PREFIX = {
    "nt$": "TWD", "ntd": "TWD", "twd": "TWD", "us$": "USD", "usd": "USD", "hk$": "HKD", "hkd": "HKD",
    "s$": "SGD", "sgd": "SGD", "a$": "AUD", "aud": "AUD", "c$": "CAD", "cad": "CAD", "cn¥": "CNY",
    "rmb": "CNY", "cny": "CNY", "jp¥": "JPY", "jpy": "JPY", "eur": "EUR", "gbp": "GBP", "krw": "KRW",
    "chf": "CHF", "inr": "INR", "€": "EUR", "£": "GBP", "₩": "KRW", "₹": "INR", "$": "$", "¥": "¥",
}  # fmt: skip
_SUFFIX = {
    "ntd": "TWD", "twd": "TWD", "usd": "USD", "hkd": "HKD", "sgd": "SGD", "aud": "AUD", "cad": "CAD",
    "rmb": "CNY", "cny": "CNY", "jpy": "JPY", "eur": "EUR", "gbp": "GBP", "krw": "KRW", "chf": "CHF",
    "inr": "INR", "nt dollars": "TWD", "nt dollar": "TWD", "us dollars": "USD", "us dollar": "USD",
    "dollars": "$", "dollar": "$", "bucks": "$", "euros": "EUR", "euro": "EUR", "yen": "JPY", "yuan": "CNY",
}  # fmt: skip
_CN_NAMED = {
    "新台幣": "TWD", "新臺幣": "TWD", "台幣": "TWD", "臺幣": "TWD", "台币": "TWD", "新台币": "TWD", "美元": "USD",
    "美金": "USD", "日圓": "JPY", "日元": "JPY", "日幣": "JPY", "日币": "JPY", "人民幣": "CNY", "人民币": "CNY",
    "歐元": "EUR", "欧元": "EUR", "英鎊": "GBP", "英镑": "GBP", "港幣": "HKD", "港币": "HKD", "港元": "HKD",
    "韓元": "KRW", "韩元": "KRW", "円": "JPY",
}  # fmt: skip
_MULTIPLIERS = {"k": 1e3, "thousand": 1e3, "m": 1e6, "million": 1e6, "bn": 1e9, "billion": 1e9}


_EN_MULT = r"(?:\s?(?P<mult>k|m|bn|million|billion|thousand)(?![A-Za-z])|(?P<cnmult>[千萬万億亿]))?"
_AMOUNT = rf"(?P<amt>{DECIMAL})(?![\d])"
_YUAN = r"(?P<yuan>塊錢|块钱|元|塊|块|圓|圆)"
_NOT_YUAN_AFTER = r"(?![組组素論论化次式運运]|分[類类]|函[數数])"

_PREFIX_RE = re.compile(
    rf"(?<![a-z0-9$])(?P<sym>{alternation(_PREFIX)})\s?{_AMOUNT}{_EN_MULT}(?:\s?{_YUAN}{_NOT_YUAN_AFTER})?"
)
# Code or word after the amount: find the word, then the amount that ends right before it (searching backwards
# from the word is much cheaper than trying a number-word pattern at every position).
_SUFFIX_CODE_RE = re.compile(rf"(?<![a-z])(?P<code>{alternation(_SUFFIX)})\b")
_AMOUNT_BEFORE_RE = re.compile(
    rf"(?<![a-z0-9$])(?<!\d[.,])(?P<amt>{DECIMAL}|{EN_NUMBER})(?![\d]){_EN_MULT}\s?\Z"
)
_SYMBOL_GATE = re.compile("[$€£¥₩₹]")
_CODE_GATE = re.compile("ntd|twd|usd|hkd|sgd|aud|cad|rmb|cny|jpy|eur|gbp|krw|chf|inr")
_CN_GATE = re.compile(r"[元塊块圓圆円幣币金鎊镑]")
# Where a Chinese amount can begin (see ``scan``): a digit, a numeral, or a currency name's first character.
_CN_FIRST = re.compile(rf"[\d{CN_NUMERAL_CHARS}{''.join(sorted({name[0] for name in _CN_NAMED}))}]")
_CN_RE = re.compile(
    rf"(?:(?P<pre>{alternation(_CN_NAMED)})\s?)?{MIXED_NUMBER_BOUNDARY}(?P<amt>{MIXED_NUMBER})\s?"
    rf"(?:(?P<named>{alternation(_CN_NAMED)})|{_YUAN}{_NOT_YUAN_AFTER}(?P<after>.?))",
)
_CN_PREFIX_ONLY_RE = re.compile(
    rf"(?P<pre>{alternation(_CN_NAMED)})\s?{MIXED_NUMBER_BOUNDARY}(?P<amt>{MIXED_NUMBER})"
)


def _is_cjk(ch: str) -> bool:
    return bool(ch) and ("\u3400" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff")


class CurrencyNormalizer:
    """Finds money amounts (see module docs for the defaults and the rules)."""

    def __init__(
        self, *, dollar_currency: str = "USD", yen_sign_currency: str = "JPY", yuan_currency: str = "TWD"
    ):
        self.dollar_currency = dollar_currency
        self.yen_sign_currency = yen_sign_currency
        self.yuan_currency = yuan_currency

    def find(self, text: str) -> list[NormalizedSpan]:
        candidates: list[NormalizedSpan] = []
        folded = fold_case(text)
        has_prefix = _SYMBOL_GATE.search(folded) is not None or _CODE_GATE.search(folded) is not None
        prefix_matches = _PREFIX_RE.finditer(folded) if has_prefix else ()
        has_cn = _CN_GATE.search(text) is not None
        for match in prefix_matches:
            code = _PREFIX[match["sym"].lower()]
            if code == "$":
                code = self.dollar_currency
            elif code == "¥":
                code = "CNY" if match["yuan"] else self.yen_sign_currency
            self._add(candidates, text, match.start(), match.end(), match, code)
        for word in _SUFFIX_CODE_RE.finditer(folded):
            match = _AMOUNT_BEFORE_RE.search(folded, number_start(folded, word.start()), word.start())
            if match is not None:
                code = _SUFFIX[" ".join(word["code"].split())].replace("$", self.dollar_currency)
                self._add(candidates, text, match.start(), word.end(), match, code)
        for match in scan(_CN_FIRST, _CN_RE, text) if has_cn else ():
            amount = parse_number(match["amt"])
            if amount is None:
                continue
            if match["named"]:
                code = _CN_NAMED[match["named"]]
            else:
                # 三塊蛋糕 is three pieces of cake: a bare 塊 before a CJK character needs an amount of 100+
                if match["yuan"] in {"塊", "块"} and _is_cjk(match["after"]) and amount < 100:
                    continue
                code = _CN_NAMED[match["pre"]] if match["pre"] else self.yuan_currency
            end = match.end("named") if match["named"] else match.end("yuan")
            candidates.append(self._span(text, match.start(), end, amount, code))
        for match in scan(_CN_FIRST, _CN_PREFIX_ONLY_RE, text) if has_cn else ():
            amount = parse_number(match["amt"])
            if amount is not None:
                candidates.append(
                    self._span(text, match.start(), match.end(), amount, _CN_NAMED[match["pre"]])
                )
        return pick_non_overlapping(candidates)

    def _add(self, out: list[NormalizedSpan], text: str, start: int, end: int, match: re.Match[str],
             code: str) -> None:  # fmt: skip
        """Append a span for ``match``'s amount (groups amt, mult, cnmult) covering ``text[start:end]``."""
        amount = parse_number(match["amt"] + (match["cnmult"] or ""))
        if amount is None:
            return
        if match["mult"]:
            amount *= _MULTIPLIERS[match["mult"].lower()]
        out.append(self._span(text, start, end, amount, code))

    @staticmethod
    def _span(text: str, start: int, end: int, amount: float, code: str) -> NormalizedSpan:
        token = f"{format_number(amount)} {code}"
        return NormalizedSpan(
            "money", text[start:end], start, end, {"amount": float(amount), "currency": code}, token
        )
