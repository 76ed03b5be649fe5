"""preprocess_chinese: the pre-pass that runs before every other normalizer pass.

Documented rules, applied in this order:

1. Zero-width characters are removed: U+200B ZERO WIDTH SPACE, U+200C ZWNJ, U+200D ZWJ, U+2060 WORD JOINER,
   U+FEFF BOM / ZERO WIDTH NO-BREAK SPACE. (Emoji sequences joined by ZWJ therefore fall apart into their
   parts; that is accepted: the canonical text is for matching, the original is kept.)
2. Full-width forms fold to half-width: U+FF01..U+FF5E (full-width ASCII letters, digits and punctuation,
   which include ，！？：；（）) to U+0021..U+007E; the full-width signs ￠￡￢￣￤￥￦ to ¢£¬¯¦¥₩; the half-width CJK
   punctuation ｡｢｣､ (U+FF61..U+FF64) is treated like its full-width form (rule 3).
3. CJK punctuation maps to ASCII where an ASCII equivalent exists, so "你好，世界" and "你好,世界" compare
   equal:

   - 。 to "."; 、 to "," (a list separator is a comma for matching);
   - 「」“” to '"'; 『』‘’ to "'";
   - 【】〔〕〖〗 to "[" and "]";
   - … to "...", ‥ to "..", the dashes —― to "-", the wave dashes 〜～ to "~";
   - 〈〉《》 (book-title marks) and ·・ (middle dots) stay: they have no ASCII equivalent.

   No space is inserted after the mapped punctuation; number patterns downstream guard against "3,5" or
   "好.3" being read as one number (thousands groups need exactly three digits; a decimal needs a digit before
   its dot).
4. Whitespace is collapsed: every run of Unicode whitespace (including U+3000 IDEOGRAPHIC SPACE, NBSP,
   newlines) becomes one ASCII space; leading and trailing whitespace is removed.

Letters outside these ranges (half-width katakana, compatibility ideographs, ligatures) are left as they are:
this is not NFKC, which would also rewrite "①", "㎏" or "ﬁ" and change meaning more than matching needs.
"""

from __future__ import annotations

import re

_ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff"


def _build_table() -> dict[int, str | None]:
    table: dict[int, str | None] = {ord(ch): None for ch in _ZERO_WIDTH}
    for code in range(0xFF01, 0xFF5F):
        table[code] = chr(code - 0xFEE0)
    table.update({ord(k): v for k, v in zip("￠￡￢￣￤￥￦", "¢£¬¯¦¥₩", strict=True)})
    punctuation = {
        "。": ".", "｡": ".", "、": ",", "､": ",",
        "「": '"', "」": '"', "｢": '"', "｣": '"', "“": '"', "”": '"',
        "『": "'", "』": "'", "‘": "'", "’": "'",
        "【": "[", "】": "]", "〔": "[", "〕": "]", "〖": "[", "〗": "]",
        "…": "...", "‥": "..", "—": "-", "―": "-", "〜": "~", "\u3000": " ",
    }  # fmt: skip
    table.update({ord(k): v for k, v in punctuation.items()})
    # U+FF5E FULLWIDTH TILDE is in the folded range already (-> "~").
    return table


_TABLE = _build_table()
_REPLACEMENTS = {chr(code): value or "" for code, value in _TABLE.items()}
# Replacing only the characters that change is several times faster than ``str.translate`` over all of it.
_TO_REPLACE = re.compile("[" + "".join(re.escape(ch) for ch in sorted(_REPLACEMENTS)) + "]")
_WHITESPACE = re.compile(r"\s{2,}|[^\S ]")  # runs, or any whitespace that is not a plain space


def _replace(match: re.Match[str]) -> str:
    return _REPLACEMENTS[match.group()]


def preprocess_chinese(text: str) -> str:
    """Fold full-width forms, CJK punctuation to ASCII, drop zero-width characters, collapse whitespace."""
    return _WHITESPACE.sub(" ", _TO_REPLACE.sub(_replace, text)).strip()
