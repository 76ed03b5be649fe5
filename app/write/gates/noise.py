"""G1: ``NoiseFilter`` drops turns that carry no memory: pleasantries, garbled text, too little content.

Three checks, cheapest first; each returns a rule id:

* ``noise.empty``: nothing but whitespace, punctuation or emoji.
* ``noise.pleasantry``: the whole turn is acknowledgement / greeting / thanks / laughter ("thanks!", "ok",
  "好的", "謝謝", "哈哈", "sounds good 👍"). A pleasantry *plus* content ("Thanks, my flight is at 7am") is kept.
* ``noise.garbled``: mojibake ("Ã©", "â€™", "锟斤拷", U+FFFD), keyboard mash ("asdfghjkl", "jdkfjdkf"), one
  character repeated ("aaaaaaa", "!!!!!!!!").
* ``noise.low_density``: fewer content tokens than ``min_content``. Language-aware: Latin, Cyrillic and other
  spaced scripts count words that are not function words or fillers; Chinese/Japanese count characters that are
  not particles or pronouns (so "我住台北" has three content units). A single content token is enough in a sentence
  ("he was a lawyer") or when it looks like an answer that matters (a number, a date, a capitalised name, an
  e-mail or URL: "Paris", "7am"); alone it is not ("continue", "tees").

It must never drop a short but informative turn ("I'm allergic to peanuts", "我住台北", "My flight is at 7am"):
the thresholds are deliberately low, because a dropped fact is lost for good while a kept pleasantry costs a row.
"""

from __future__ import annotations

import re

from app.safety.gate import GateResult

GATE = "noise"
FAMILY = "noise"

_PLEASANTRIES_EN = (
    "thanks a lot", "thanks so much", "thank you so much", "thank you very much", "thank you", "thanks", "thank u",
    "thx", "tysm", "ty", "cheers", "much appreciated", "appreciate it", "ok", "okay", "okey", "okie", "k", "kk",
    "alright", "all right", "sure", "sure thing", "yes", "yeah", "yep", "yup", "ya", "no", "nope", "nah", "cool",
    "great", "nice", "awesome", "perfect", "wonderful", "excellent", "amazing", "fantastic", "sweet", "neat",
    "got it", "gotcha", "understood", "noted", "roger", "roger that", "sounds good", "sounds great",
    "that sounds great", "that sounds good", "makes sense", "fair enough", "i see", "oh i see", "right", "indeed",
    "of course", "no problem", "no worries", "np", "you're welcome", "youre welcome", "welcome", "my pleasure",
    "hi", "hello", "hey", "hey there", "hi there", "hello there", "yo", "good morning", "good afternoon",
    "good evening", "good night", "gn", "bye", "goodbye", "bye bye", "see you", "see ya", "see you later",
    "later", "take care", "talk soon", "ttyl", "lol", "lmao", "rofl", "haha", "hehe", "hmm", "hm", "mhm", "uh huh",
    "wow", "oh", "ah", "oops", "yay", "me too", "same", "same here", "agreed", "exactly", "true", "totally",
    "definitely", "absolutely", "will do", "done", "good", "very good", "good job", "well done", "nice one",
    "love it", "i love it", "that's great", "thats great", "that is great", "that's awesome", "that's cool",
    "that's nice", "that's amazing", "you too", "and you", "how are you", "i'm fine", "im fine", "i'm good",
    "fine", "ok thanks", "okay thanks", "please", "sorry", "my bad", "congrats", "congratulations",
)
_PLEASANTRIES_CJK = (
    "好的", "好滴", "好啊", "好吧", "好", "行", "可以", "嗯嗯", "嗯", "哦", "噢", "喔", "哦哦", "收到", "了解", "明白",
    "知道了", "没问题", "沒問題", "谢谢你", "謝謝你", "谢谢", "謝謝", "多谢", "多謝", "感谢", "感謝", "不客气", "不客氣",
    "你好", "您好", "早安", "午安", "晚安", "早上好", "晚上好", "再见", "再見", "拜拜", "对", "對", "是的", "是", "对的",
    "對的", "没错", "沒錯", "太好了", "不错", "不錯", "棒", "厉害", "厲害", "辛苦了", "ありがとう", "ありがとうございます",
    "はい", "了解です", "おはよう", "こんにちは", "おやすみ", "감사합니다", "고마워", "네", "안녕",
)
_LAUGH = re.compile(r"^(?:(?:ha|he|hi|ho|ja|je|xa|ka|lol|lmao|w)+|[哈呵嘿嘻]+|[笑草w]+|ㅋ+|ㅎ+|5{3,}|x?d+)$", re.I)
_SEPARATORS = re.compile(r"[\s\W_]+", re.UNICODE)

# Function words and fillers: not content. English plus the most frequent words of other spaced languages.
_STOP = frozenset(
    """a an the and or but if so to of in on at by for with from as is am are was were be been being do does did
    have has had i me my mine we us our you your yours he him his she her it its they them their this that these
    those there here what which who whom whose when where why how not no yes ok okay just really very too also
    then than there's it's i'm you're that's what's can could would should will shall may might must up down out
    about into over again once all any both each few more most other some such only own same so s t don doesn
    didn isn aren wasn weren won wouldn hmm uh um er ah oh wow hey hi hello yeah yep nope lol haha like well
    anyway anyways actually basically literally maybe perhaps sure thanks thank please sorry right okay got get
    gonna wanna let let's lets oh ooh huh yay nah one thing things stuff something anything everything nothing
    le la les de des du un une et est en je tu il elle nous vous ils que qui pas ne der die das und ist ich du er
    sie wir ihr nicht ein eine el los las y es yo tu lo que no se un una""".split()
)
_CJK_FUNCTION = frozenset("的了吗嗎呢吧啊呀哦喔噢嗯是在我你他她它们們这這那就也都和与與很太还還又么麼呵哈嘿啦喽哟嘛了个個着著过過把被给給让讓")

_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?|\d[\d.,:/-]*\w*", re.UNICODE)
_CJK_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_SIGNAL = re.compile(r"\d|@|https?://|www\.", re.I)
_MOJIBAKE = re.compile(r"Ã[\x80-\xbf©¨¤¶§ ]|â€[™œ\x9d“”˜¢¦]|Â[\xa0-\xbf]|ï¿½|锟斤拷|烫烫烫|屯屯屯|\ufffd|[\x80-\x9f]")
_VOWELS = frozenset("aeiouyàáâäèéêëìíîïòóôöùúûü")
_KEY_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm", "1234567890")


_MARKS = re.compile(r"[^\w\s'’\u0300-\u036f\u0900-\u0dff]|_")


def _strip_marks(text: str) -> str:
    """Lower-case, drop emoji, punctuation and symbols, collapse whitespace."""
    return " ".join(_MARKS.sub(" ", text.lower()).split())


def _alternation(phrases: tuple[str, ...]) -> str:
    return "|".join(sorted((re.escape(p) for p in phrases), key=len, reverse=True))


# Spaced-script phrases must be whole words ("ok" is not removed from "book"); CJK ones are matched anywhere.
_PLEASANTRY_EN_RE = re.compile(r"(?<![^\W_])(?:" + _alternation(_PLEASANTRIES_EN) + r")(?![^\W_])")
_PLEASANTRY_CJK_RE = re.compile("(?:" + _alternation(_PLEASANTRIES_CJK) + ")")


def _only_pleasantries(stripped: str) -> bool:
    if not stripped:
        return False
    rest = _PLEASANTRY_CJK_RE.sub(" ", _PLEASANTRY_EN_RE.sub(" ", stripped))
    units = rest.split()
    return all(_LAUGH.match(u) for u in units)


def _mash_token(tok: str) -> bool:
    """'asdfghjkl', 'jdkfjdkf', 'xkcdqzt': long, few vowels or a keyboard run, not a word."""
    if len(tok) < 5 or not tok.isascii() or not tok.isalpha():
        return False
    low = tok.lower()
    vowels = len(low) - len(low.translate(_NO_VOWELS))  # each vowel counted, in C
    if vowels / len(low) < 0.12:
        return True
    if _KEY_RUN.search(low):  # any of _KEY_RUNS in it: one search of the literals
        return True
    return len(low) >= 8 and len(set(low)) <= 3  # 'jdjdjdjdjd'


# Four keys in a row on a keyboard, either direction ('asdf', 'lkjh', 'qwer').
_KEY_RUNS = tuple({row[i:i + 4] for row in _KEY_ROWS for i in range(len(row) - 3)}
                  | {row[::-1][i:i + 4] for row in _KEY_ROWS for i in range(len(row) - 3)})
_KEY_RUN = re.compile("|".join(map(re.escape, sorted(_KEY_RUNS))))
_NO_VOWELS = str.maketrans("", "", "aeiouy")
_SHORT = 240  # characters: only a turn this short can be a pleasantry or too thin
_MASH_TOKENS = 40


def _garbled(text: str, stripped: str) -> str | None:
    if _MOJIBAKE.search(text):
        bad = sum(len(m) for m in _MOJIBAKE.findall(text))
        if bad / len(text) >= 0.08:  # a few stray sequences in a long paste are not a garbled turn
            return "mojibake"
    core = "".join(text.split())
    if 4 <= len(core) <= 400 and len(set(core)) <= 2 and not _CJK_CHAR.search(core) and not core.isdigit():
        return "one character repeated"
    tokens = stripped.split()[:_MASH_TOKENS]
    if tokens:
        mash = sum(len(t) for t in tokens if _mash_token(t))
        letters = sum(len(t) for t in tokens)
        if mash and mash / letters >= 0.6:
            return "keyboard mash"
    return None


def content_units(text: str, enough: int | None = None) -> tuple[int, bool]:
    """(number of content units, whether one of them is a strong signal: digit, e-mail, URL, capitalised name).
    With ``enough``, counting stops once that many units are found."""
    units = 0
    signal = bool(_SIGNAL.search(text))
    for m in _WORD.finditer(text):
        tok = m.group()
        if _CJK_CHAR.search(tok):
            units += sum(1 for ch in tok if _CJK_CHAR.match(ch) and ch not in _CJK_FUNCTION)
        else:
            low = tok.lower().replace("’", "'")
            if low in _STOP or len(low) < 2 and not low.isdigit():
                continue
            units += 1
            if tok[0].isupper() and low not in _PLEASANTRY_SET:
                signal = True
        if enough is not None and units >= enough:
            break
    return units, signal


_PLEASANTRY_SET = frozenset(_PLEASANTRIES_EN)


class NoiseFilter:
    """``NoiseFilter()(text) -> GateResult``. ``min_content``: content units a turn needs (default 2)."""

    def __init__(self, min_content: int = 2) -> None:
        self.min_content = min_content

    def __call__(self, text: str) -> GateResult:
        short = len(text) <= _SHORT
        stripped = _strip_marks(text if short else text[:2000])
        if not stripped:
            return GateResult.reject(GATE, "noise.empty", FAMILY, "no words: whitespace, punctuation or emoji only")
        if short and _only_pleasantries(stripped):
            return GateResult.reject(GATE, "noise.pleasantry", FAMILY, f"pleasantry only: {stripped[:40]!r}")
        why = _garbled(text, stripped)
        if why:
            return GateResult.reject(GATE, "noise.garbled", FAMILY, f"garbled text ({why})")
        if not short:
            return GateResult.ok(GATE)
        units, signal = content_units(text, enough=self.min_content)
        if units < self.min_content and not (units >= 1 and (signal or len(stripped.split()) > 2)):
            return GateResult.reject(
                GATE, "noise.low_density", FAMILY, f"{units} content unit(s), needs {self.min_content}"
            )
        return GateResult.ok(GATE)
