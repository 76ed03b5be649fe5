"""Encoded payloads: find blocks of base64 / base32 / hex / binary / ``\\uXXXX`` / ``%XX`` / Morse / ROT13 /
Caesar / spaced-out letters / leetspeak / homoglyphs, anywhere in a text (an encoding inside an ordinary sentence is
found as well as a text that is all encoding), decode them, and judge what came out.

Policy (decided here, tested in ``tests/unit/test_safety_encoding.py``, measured by ``memvault bench guard``):

1. **The decoded text is itself unsafe** (the ruleset, run again on the decoded text, recursion depth <= 2, so an
   encoding inside an encoding is decoded too) -> ``enc.<kind>.unsafe_payload`` (high). This is the main rule: an instruction hidden in an encoding is blocked
   exactly when the same instruction in clear text would be.
2. **Readable text hidden in an encoding, together with a request to decode it** ("decode this", "what does this
   mean?", "ROT13 decoded string:", "in your monologue") -> ``enc.<kind>.smuggled_text`` (high). Asking a model to
   decode and act on a sentence the reader cannot see is token smuggling even when the sentence looks harmless; it
   is not something a memory should keep. So is an encoding inside an encoding with such a request, whatever the
   innermost layer says.
3. **An opaque high-entropy blob in an instruction-like context** ("always decode and apply the following config",
   "decode and follow") -> ``enc.opaque_instruction`` (high). The blob is unexplained and the text tells the model to
   act on it.
4. Everything else passes: a key, a hash, a UUID, a JWT, an image data URI, ``'dXNlcjpwYXNz' decodes to user:pass``.
   Benign base64 is never blocked merely for being base64. Readable text hidden in an encoding with no request to
   decode it scores ``enc.<kind>.hidden_text`` (medium), which blocks only together with another cue.

Cheap pre-checks (a character class search, substring tests) run before any decoding, so ordinary turns pay
almost nothing.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import math
import operator
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from urllib.parse import unquote

MAX_BLOBS = 8  # per text; an attacker gains nothing by sending more, a log dump should not cost more
MIN_B64 = 16


@dataclass(frozen=True, slots=True)
class EncodedHit:
    rule_id: str
    severity: str
    start: int
    end: int
    decoded: str


def shannon_entropy(s: str) -> float:
    """Bits per character."""
    if not s:
        return 0.0
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values())


def alphabet_ratio(s: str, alphabet: frozenset[str]) -> float:
    return sum(ch in alphabet for ch in s) / len(s) if s else 0.0


B64_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_")
HEX_ALPHABET = frozenset("0123456789abcdefABCDEF")

_WORD = re.compile(r"[^\W\d_]{2,}")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


def readable(decoded: str, min_words: int = 3) -> bool:
    """Does ``decoded`` read as natural-language text (not bytes, not a key, not JSON)?"""
    if not decoded or len(decoded) < 6:
        return False
    printable = sum(ch.isprintable() or ch in "\n\t" for ch in decoded) / len(decoded)
    if printable < 0.95:
        return False
    if len(_CJK.findall(decoded)) >= 6:
        return True
    letters = sum(ch.isalpha() or ch == " " for ch in decoded) / len(decoded)
    return letters >= 0.7 and len(_WORD.findall(decoded)) >= min_words and " " in decoded


# ---- candidate finders -------------------------------------------------------------------------------------------
_DATA_URI = re.compile(r"data:[\w/+.-]+;base64,[A-Za-z0-9+/=]+")
_PEM = re.compile(r"-----BEGIN [A-Z ]+-----[\s\S]*?-----END [A-Z ]+-----")
_B64 = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/]{%d,}={0,2}(?![A-Za-z0-9+/=])" % MIN_B64)
_B64URL = re.compile(r"(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{24,}={0,2}(?![A-Za-z0-9_=-])")
_B32 = re.compile(r"(?<![A-Z2-7])[A-Z2-7]{24,}={0,6}(?![A-Z2-7=])")
_HEX = re.compile(r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}){12,}(?![0-9A-Fa-f])")
_HEX_ESC = re.compile(r"(?:\\x[0-9A-Fa-f]{2}){4,}|(?:0x[0-9A-Fa-f]{2}[\s,]*){6,}")
_BINARY = re.compile(r"(?:[01]{8}[\s,]*){4,}")
_UNI_ESC = re.compile(r"(?:\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8}){4,}")
_HTML_ENT = re.compile(r"(?:&#(?:x[0-9A-Fa-f]{2,5}|\d{2,6});){4,}")
_PERCENT = re.compile(r"[^\s%]*(?:%[0-9A-Fa-f]{2}[^\s%]*){3,}")
_PCT_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
_MORSE = re.compile(r"(?<![\w.-])(?:[.\-]{1,7}(?:\s+/\s+|\s+)){5,}[.\-]{1,7}(?![\w.-])")
_SPACED = re.compile(r"(?<!\S)(?:[^\W\d_](?:[ ]|\s{2,})){9,}[^\W\d_](?!\S)")
PADDING_REPEATS = 30
_LETTER_RUN = re.compile(r"(?:(?<!\S)[^\W\d_][ ]{1,3}){9}")
# Two one-letter words in a row (" s  a "): every run of nine has them; a plain space first, so the regex engine
# jumps from space to space instead of trying each letter of an ordinary text.
_LETTER_PAIR = re.compile(r" [^\W\d_] {1,3}[^\W\d_] ")
_PADDING = re.compile(r"(\S{1,8}(?:\s+\S{1,8}){0,3}?)(?:\s*\1){%d,}" % (PADDING_REPEATS - 1))
_SEPARATORS = frozenset("-=_*#~.·•|:+ ")

_DECODE_REQUEST = re.compile(
    r"\b(?:decod\w*|decipher\w*|decrypt\w*|deobfuscat\w*|translate\s+(?:this|it|the\s+following)|interpret|"
    r"what\s+does\s+(?:this|it)\s+(?:mean|say)|what\s+it\s+says|encoded\s*(?:string|text|message)?\s*:|"
    r"decoded\s*(?:string|text)?\s*:|in\s+your\s+monologue|secure\s+system\s+message|secret\s+message|"
    r"rot-?13|caesar|c[ée]sar|morse|base\s?(?:16|32|58|64)|binary\s+(?:string|code|config)|hex(?:adecimal)?\s+"
    r"(?:string|code)|url-?encoded|unicode-?escaped|cipher|decodificar|d[ée]coder|dekodieren|解码|解碼|解密|翻译|"
    r"i-?decode|giải\s+mã)",
    re.IGNORECASE,
)
_ACT_ON_BLOB = re.compile(
    r"\b(?:decode|decrypt|deobfuscate|unpack)\b[^.\n]{0,40}?\b(?:and|then)\s+(?:follow|apply|execute|run|obey|do|"
    r"perform|carry\s+out|implement)|\b(?:always|first)\s+decode\b|\bapply\s+the\s+following\s+(?:\w+\s+)?"
    r"(?:config|payload|instructions?|settings)|\bexecute\s+the\s+(?:following|decoded)|\bfollow\s+the\s+decoded",
    re.IGNORECASE,
)

_MORSE_TABLE = {
    ".-": "a", "-...": "b", "-.-.": "c", "-..": "d", ".": "e", "..-.": "f", "--.": "g", "....": "h", "..": "i",
    ".---": "j", "-.-": "k", ".-..": "l", "--": "m", "-.": "n", "---": "o", ".--.": "p", "--.-": "q", ".-.": "r",
    "...": "s", "-": "t", "..-": "u", "...-": "v", ".--": "w", "-..-": "x", "-.--": "y", "--..": "z",
    "-----": "0", ".----": "1", "..---": "2", "...--": "3", "....-": "4", ".....": "5", "-....": "6",
    "--...": "7", "---..": "8", "----.": "9", "..--..": "?", ".-.-.-": ".", "--..--": ",",
}

# English function words, plain and ROT13-shifted, to notice ROT13 text without decoding every message.
_STOP = (" the ", " and ", " you ", " your ", " is ", " to ", " of ", " a ", " in ", " me ", " with ", " for ")
_ROT = tuple(codecs.encode(w, "rot13") for w in _STOP)
_DANGER_STEMS = (
    "ignore", "instruction", "password", "forget", "disregard", "prompt", "reveal", "secret", "system", "hate",
    "pwned", "override", "bypass", "kill", "jailbreak", "saythat", "print", "repeat",
)


def _decode_b64(s: str) -> str | None:
    s = s.strip().rstrip("=")
    s = s.replace("-", "+").replace("_", "/")
    try:
        raw = base64.b64decode(s + "=" * (-len(s) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None
    return _bytes_to_text(raw)


def _decode_b32(s: str) -> str | None:
    s = s.rstrip("=")
    try:
        raw = base64.b32decode(s + "=" * (-len(s) % 8))
    except (binascii.Error, ValueError):
        return None
    return _bytes_to_text(raw)


def _decode_hex(s: str) -> str | None:
    digits = re.sub(r"\\x|0x|[\s,]", "", s)
    try:
        raw = bytes.fromhex(digits)
    except ValueError:
        return None
    return _bytes_to_text(raw)


def _decode_binary(s: str) -> str | None:
    bits = re.findall(r"[01]{8}", s)
    return _bytes_to_text(bytes(int(b, 2) for b in bits))


def _decode_unicode(s: str) -> str | None:
    try:
        return codecs.decode(s, "unicode_escape")
    except (UnicodeDecodeError, ValueError):
        return None


def _decode_html_entities(s: str) -> str | None:
    out = []
    for ent in re.findall(r"&#(x[0-9A-Fa-f]+|\d+);", s):
        try:
            out.append(chr(int(ent[1:], 16) if ent[0] in "xX" else int(ent)))
        except (ValueError, OverflowError):
            return None
    return "".join(out)


def _decode_morse(s: str) -> str | None:
    words = re.split(r"\s+/\s+|\s{3,}", s.strip())
    out = []
    for w in words:
        letters = [_MORSE_TABLE.get(code) for code in w.split()]
        if any(x is None for x in letters):
            return None
        out.append("".join(letters))  # type: ignore[arg-type]
    return " ".join(out)


def _bytes_to_text(raw: bytes) -> str | None:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _caesar(s: str, shift: int) -> str:
    def rot(ch: str) -> str:
        if "a" <= ch <= "z":
            return chr((ord(ch) - 97 - shift) % 26 + 97)
        if "A" <= ch <= "Z":
            return chr((ord(ch) - 65 - shift) % 26 + 65)
        return ch

    return "".join(rot(c) for c in s)


def _stop_count(s: str) -> int:
    padded = f" {s.lower()} "
    return sum(padded.count(w) for w in _STOP)


# ---- the detector ------------------------------------------------------------------------------------------------
Rescan = Callable[[str, int], bool]


def detect(text: str, rescan: Rescan, depth: int) -> list[EncodedHit]:
    """Encoded-payload hits in ``text`` (offsets into ``text``). ``rescan(decoded, depth - 1)`` says whether decoded
    text is unsafe under the full ruleset; recursion stops at ``depth == 0``."""
    hits: list[EncodedHit] = []
    tokens = text.split()
    longest = max(map(len, tokens), default=0)
    blobs = _candidates(text, longest)
    if not blobs:
        return _padding(text, tokens, longest)
    skip = [(m.start(), m.end()) for m in _DATA_URI.finditer(text)] + [(m.start(), m.end()) for m in _PEM.finditer(text)]
    context = _Context(text)
    for kind, start, end, decoded in blobs[:MAX_BLOBS]:
        if any(a <= start < b for a, b in skip):
            continue
        if kind == "spaced_letters":
            hits.append(EncodedHit("enc.spaced_letters", "high", start, end, decoded or ""))
            continue
        if kind in _RESPELLED:
            # The same words, re-spelt: only what they say counts (there is nothing hidden to smuggle).
            if decoded is not None and depth > 0 and rescan(decoded, depth - 1):
                hits.append(EncodedHit(f"enc.{kind}.unsafe_payload", "high", start, end, decoded))
            continue
        if decoded is not None and readable(decoded, 2 if context.decode_request else 3):
            if depth > 0 and rescan(decoded, depth - 1):
                hits.append(EncodedHit(f"enc.{kind}.unsafe_payload", "high", start, end, decoded))
            elif context.decode_request or context.act_on_blob:
                hits.append(EncodedHit(f"enc.{kind}.smuggled_text", "high", start, end, decoded))
            elif readable(decoded, 6):
                hits.append(EncodedHit(f"enc.{kind}.hidden_text", "medium", start, end, decoded))
        elif decoded is not None and depth > 0 and _candidates(decoded):
            # An encoding inside an encoding (base64 of base64): what it decodes to is judged, within the depth;
            # past it, layers of encoding with a request to decode them are smuggling whatever they hold.
            if rescan(decoded, depth - 1):
                hits.append(EncodedHit(f"enc.{kind}.unsafe_payload", "high", start, end, decoded))
            elif context.decode_request or context.act_on_blob:
                hits.append(EncodedHit(f"enc.{kind}.smuggled_text", "high", start, end, decoded))
        elif kind in ("base64", "base32", "hex", "binary") and context.act_on_blob and _opaque(text[start:end]):
            hits.append(EncodedHit("enc.opaque_instruction", "high", start, end, decoded or ""))
    return hits + _padding(text, tokens, longest)


class _Context:
    """Whether the text asks to decode or to act on a blob: two long regexes, run only when a blob needs them."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._decode: bool | None = None
        self._act: bool | None = None

    @property
    def decode_request(self) -> bool:
        if self._decode is None:
            self._decode = _DECODE_REQUEST.search(self._text) is not None
        return self._decode

    @property
    def act_on_blob(self) -> bool:
        if self._act is None:
            self._act = _ACT_ON_BLOB.search(self._text) is not None
        return self._act


def _opaque(blob: str) -> bool:
    core = blob.strip().rstrip("=")
    if len(core) < 16:
        return False
    if alphabet_ratio(core, HEX_ALPHABET) == 1.0:
        return shannon_entropy(core) >= 3.0
    if set(core) <= {"0", "1", " ", ","}:
        return True
    return alphabet_ratio(core, B64_ALPHABET) >= 0.98 and shannon_entropy(core) >= 4.0


def _candidates(text: str, longest: int | None = None) -> list[tuple[str, int, int, str | None]]:
    """(kind, start, end, decoded-or-None) for every encoded-looking block, cheapest tests first."""
    out: list[tuple[str, int, int, str | None]] = []
    taken: list[tuple[int, int]] = []

    def add(kind: str, start: int, end: int, decoded: str | None) -> None:
        if any(a <= start < b or a < end <= b for a, b in taken):
            return
        taken.append((start, end))
        out.append((kind, start, end, decoded))

    if longest is None:
        longest = max(map(len, text.split()), default=0)
    if "\\u" in text or "\\U" in text:
        for m in _UNI_ESC.finditer(text):
            add("unicode_escape", m.start(), m.end(), _decode_unicode(m.group()))
    if "&#" in text:
        for m in _HTML_ENT.finditer(text):
            add("html_entities", m.start(), m.end(), _decode_html_entities(m.group()))
    if "\\x" in text or "0x" in text:
        for m in _HEX_ESC.finditer(text):
            add("hex", m.start(), m.end(), _decode_hex(m.group()))
    if "%" in text and len(_PCT_ESCAPE.findall(text)) >= 3:
        for m in _PERCENT.finditer(text):
            add("percent", m.start(), m.end(), unquote(m.group()))
    if text.count("0") + text.count("1") >= 32 and ("0000" in text or "0110" in text or "0100" in text):
        for m in _BINARY.finditer(text):
            add("binary", m.start(), m.end(), _decode_binary(m.group()))
    if longest >= MIN_B64:
        # base-N and hex blocks have no spaces: only the long tokens are searched, not the whole text
        spans = [(m.start(), m.end()) for m in _LONG_TOKEN.finditer(text)]
        for m in _within(_HEX, text, spans):
            add("hex", m.start(), m.end(), _decode_hex(m.group()))
        for m in _within(_B32, text, spans):
            decoded = _decode_b32(m.group())
            if decoded is not None and readable(decoded, 2):
                add("base32", m.start(), m.end(), decoded)
        for m in _within(_B64, text, spans):
            token = m.group()
            if token.isalpha() and (token.islower() or token.isupper()):
                continue  # a long word, not base64
            add("base64", m.start(), m.end(), _decode_b64(token))
        if "-" in text or "_" in text:
            for m in _within(_B64URL, text, spans):
                if "-" in m.group() or "_" in m.group():
                    add("base64", m.start(), m.end(), _decode_b64(m.group()))
    if text.count(".-") + text.count("-.") >= 4:
        for m in _MORSE.finditer(text):
            add("morse", m.start(), m.end(), _decode_morse(m.group()))
    _rot_and_caesar(text, add)
    _respelled(text, add)
    if _LETTER_PAIR.search(text) and _LETTER_RUN.search(text):
        for m in _SPACED.finditer(text):
            collapsed = re.sub(r"\s+", "", m.group())
            if len(set(collapsed.lower())) >= 5 and any(stem in collapsed.lower() for stem in _DANGER_STEMS):
                add("spaced_letters", m.start(), m.end(), _unspace(m.group()))
    return out


_LONG_TOKEN = re.compile(r"\S{%d,}" % MIN_B64)


def _within(pattern: re.Pattern[str], text: str, spans: list[tuple[int, int]]) -> Iterator[re.Match[str]]:
    """The matches of ``pattern`` inside the spans (whitespace-delimited tokens: a match of a pattern without
    whitespace cannot cross them, and the lookarounds see the same neighbours), in order."""
    for start, end in spans:
        yield from pattern.finditer(text, start, end)


# ---- re-spelt words: leetspeak and homoglyphs -------------------------------------------------------------------
_RESPELLED = ("leetspeak", "homoglyph")
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s", "|": "l",
                       "!": "i", "8": "b", "9": "g"})
# A look-alike digit or symbol inside a word ("1gn0r3"), at its start or at its end. Written to begin with that
# character (the lookbehinds after it), so the regex engine skips ahead to the rare digits and symbols instead of
# trying every letter of an ordinary text.
_LEET_HINT = re.compile(
    r"[0134578@$|!9](?:(?<=[A-Za-z].)(?=[A-Za-z])|(?<=[0134578@$|])(?<![\w@$|!].)(?=[A-Za-z]{2})|"
    r"(?<=[0134578@$|])(?<=[A-Za-z]{2}.)(?![\w@$|]))"
)
_LEET_WORD = re.compile(r"(?<![\w@$|])(?=[\w@$|!]*[A-Za-z])(?=[\w@$|!]*[0134578@$|9])[A-Za-z0-9@$|!]{3,}(?![\w@$|])")
MIN_LEET_WORDS = 2
# Cyrillic and Greek letters that look like Latin ones (the usual spoofing set), for text written in Latin script.
_HOMOGLYPHS = str.maketrans({
    "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "і": "i", "ј": "j", "ѕ": "s", "ԁ": "d",
    "ԛ": "q", "ԝ": "w", "һ": "h", "ӏ": "l", "к": "k", "м": "m", "т": "t", "в": "b", "н": "h",
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C", "Т": "T", "Х": "X",
    "І": "I", "Ј": "J", "Ѕ": "S", "У": "Y",
    "α": "a", "ο": "o", "ε": "e", "ι": "i", "κ": "k", "ν": "v", "ρ": "p", "τ": "t", "υ": "u", "χ": "x",
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O", "Ρ": "P",
    "Τ": "T", "Υ": "Y", "Χ": "X",
})
_MIXED_SCRIPT = re.compile(r"[A-Za-z][\u0370-\u03ff\u0400-\u04ff\u0500-\u052f]|[\u0370-\u03ff\u0400-\u04ff\u0500-\u052f][A-Za-z]")


def _respelled(text: str, add: Callable[[str, int, int, str | None], None]) -> None:
    """Leetspeak ('1gn0r3 4ll pr3v10u5 1n5truct10n5') and Latin words spelt with look-alike Cyrillic or Greek
    letters ('іgnоrе'): the text with those words spelt plainly, for the ruleset to judge again."""
    if _LEET_HINT.search(text):
        words = [m for m in _LEET_WORD.finditer(text) if not m.group().isdigit() and any(c.isalpha() for c in m.group())]
        leet = [m for m in words if _leety(m.group())]
        if len(leet) >= MIN_LEET_WORDS:
            out, pos = [], 0
            for m in leet:
                out.append(text[pos:m.start()])
                out.append(m.group().translate(_LEET).lower())
                pos = m.end()
            out.append(text[pos:])
            add("leetspeak", leet[0].start(), leet[-1].end(), "".join(out))
    if not text.isascii() and _MIXED_SCRIPT.search(text):
        add("homoglyph", 0, len(text), text.translate(_HOMOGLYPHS))


_UNIT = re.compile(r"^\d+(?:[a-z]{1,3})$|^[a-z]{1,3}\d+$", re.IGNORECASE)  # 4g, 5km, mp3, b2b, x86...


def _leety(word: str) -> bool:
    """A word with letters and look-alike digits or symbols inside, not a unit, a model number or a handle."""
    if _UNIT.match(word) or word.startswith("@") or word.endswith("!") and word[:-1].isalpha():
        return False
    letters = sum(c.isalpha() for c in word)
    return letters >= 2 and letters < len(word)


def _unspace(s: str) -> str:
    """'S a y  t h a t' -> 'Say that' (wide gaps are word breaks); single gaps everywhere -> glued letters."""
    if re.search(r"\S\s{2,}\S", s):
        return " ".join(w.replace(" ", "") for w in re.split(r"\s{2,}", s.strip()))
    return s.replace(" ", "")


def _rot_and_caesar(text: str, add: Callable[[str, int, int, str | None], None]) -> None:
    low = f" {text.lower()} "
    rot_hits = sum(low.count(w) for w in _ROT)
    if rot_hits >= 3 and rot_hits > 2 * sum(low.count(w) for w in _STOP):
        add("rot13", 0, len(text), codecs.encode(text, "rot13"))
        return
    if not any(k in low for k in _CAESAR_CUES):
        return
    m = _CAESAR_SHIFT.search(low)
    if m:
        shift = int(m.group(1)) % 26
        decoded = _caesar(text, shift)
        if _stop_count(decoded) >= 2 + _stop_count(text):
            add("caesar", 0, len(text), decoded)


_CAESAR_CUES = ("caesar", "sar", "shift", "cambio", "desplazamiento", "verschiebung")
_CAESAR_SHIFT = re.compile(
    r"(?:caesar|c[ée]sar|shift\s+of|cambio\s+de|desplazamiento\s+de|verschiebung)\D{0,12}(\d{1,2})"
)


def _padding(text: str, tokens: list[str], longest: int) -> list[EncodedHit]:
    """A short token repeated dozens of times: filler that pushes the real prompt out of the model's attention.
    ``tokens``: ``text.split()``; ``longest``: the length of the longest token."""
    if len(text) < 60:
        return []
    suspicious = longest >= 60
    if not suspicious and len(tokens) >= PADDING_REPEATS:
        # neighbours equal at a period of 1..4 tokens ('k k k', ') ] } ) ] }'), counted in C
        suspicious = any(sum(map(operator.eq, tokens, tokens[k:])) >= PADDING_REPEATS - 1 for k in (1, 2, 3, 4))
    if not suspicious:
        return []
    for m in _PADDING.finditer(text):
        unit = m.group(1).strip()
        if not unit or set(unit) <= _SEPARATORS or unit.replace(" ", "").isdigit():
            continue  # horizontal rules, table separators, line numbers
        return [EncodedHit("enc.padding_flood", "high", m.start(), m.end(), "")]
    return []
