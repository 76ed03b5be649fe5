"""Text helpers shared by the heuristic twins: sentence splitting, content terms, word counts (EN + ZH).

Chinese has no spaces, so a "term" of Chinese text is a character bigram (robust for overlap measures), and a
"word" for length limits is two Chinese characters (a typical Chinese word length).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from functools import lru_cache

from app.models.tasks.cue_filter import absent, literal_screen

_CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
CJK_RE = re.compile(f"[{_CJK}]")
_CJK_RUN = re.compile(f"[{_CJK}]+")
_LATIN_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’\-\.]*[A-Za-z0-9]|[A-Za-z0-9]")
_ABBREV = {
    "mr",
    "mrs",
    "ms",
    "dr",
    "prof",
    "st",
    "vs",
    "etc",
    "e.g",
    "i.e",
    "inc",
    "jr",
    "sr",
    "no",
    "approx",
}

EN_STOPWORDS = frozenset(
    """a an the and or but if then else so of to in on at by for with from about into over under as is am are was
    were be been being do does did doing have has had having i me my mine myself we us our ours you your yours he him
    his she her hers it its they them their theirs this that these those there here what which who whom whose when
    where why how all any both each few more most other some such no nor not only own same than too very can will
    just should would could might may must shall now also really actually basically like well oh yeah yes ok okay hey
    hi hello um uh lol haha thanks thank please get got going go gonna wanna let lets let's it's i'm i've i'll i'd
    you're you've that's there's what's don't doesn't didn't isn't aren't wasn't weren't won't can't couldn't
    wouldn't shouldn't up out off again further once s t d ll m re ve y just quite pretty much many lot lots thing
    things stuff something anything everything one ones way still even ever back new good great wow cool awesome
    nice amazing glad yep nope omg sounds sound sure totally definitely absolutely""".split()
)
_CALENDAR = frozenset(
    """monday tuesday wednesday thursday friday saturday sunday january february march april may june july august
    september october november december today tomorrow yesterday""".split()
)
# Function characters: a Chinese bigram made only of these carries no topic.
ZH_STOPCHARS = frozenset(
    "的了是在我你他她它們们这這那就也都和與与及或而但並并很還还又再把被給给讓让對对向從从到於于為为着著過过吗嗎呢吧啊呀嘛哦喔嗯呃個个些有沒没不會会要想能可以得地之其此該该每各啦哈"
)
FILLERS_EN = re.compile(
    r"\b(um+|uh+|erm|you know|i mean|basically|literally|honestly|actually|really|just|very)\b[,]?\s*",
    re.I,
)
LEADING_DISCOURSE_EN = re.compile(
    r"^(?:(?:oh|ah|yeah|yes|yep|no|nope|well|so|ok|okay|hey|hi|hmm+|wow|sure|right|alright|great|cool|nice|thanks|"
    r"thank you|anyway|also|and|but|haha|lol)\b[\s,!.:;-]*)+",
    re.I,
)
FILLERS_ZH = re.compile(
    r"^(嗯+|呃+|那個|那个|就是說|就是说|其實|其实|然後|然后|對了|对了|好吧|好的|哈哈+)[，,、\s]*"
)
FINAL_PARTICLES_ZH = re.compile(r"[啊呀吧呢嘛喔哦啦]+(?=[。！？!?.]*$)")


_ASCII_LETTER = re.compile(r"[A-Za-z]")


def is_cjk(text: str) -> bool:
    """True when Chinese characters make up at least a third of the letters."""
    cjk = len(CJK_RE.findall(text))
    latin = len(_ASCII_LETTER.findall(text))  # the letters c.isascii() and c.isalpha() accept, in C
    return cjk > 0 and cjk * 2 >= latin / 3


def split_sentences(text: str) -> list[str]:
    """Sentences of mixed EN/ZH text. Splits on . ! ? ; 。！？； and newlines, not inside numbers or abbreviations."""
    text = re.sub(r"\s+\n|\n\s+", "\n", text.strip())
    out: list[str] = []
    buf: list[str] = []
    n = len(text)
    i = 0
    while i < n:
        ch = text[i]
        buf.append(ch)
        end = False
        if ch in "。！？；!?\n":
            while i + 1 < n and text[i + 1] in '。！？!?」』"”’)':
                i += 1
                buf.append(text[i])
            end = True
        elif ch == ";":
            end = True
        elif ch == ".":
            prev_word = re.search(r"([A-Za-z\.]+)\.$", "".join(buf[-8:]))
            nxt = text[i + 1] if i + 1 < n else " "
            if nxt.isdigit() and i > 0 and text[i - 1].isdigit():
                end = False
            elif prev_word and prev_word.group(1).lower() in _ABBREV:
                end = False
            elif nxt in ' "”’)\n' or i + 1 == n:
                while i + 1 < n and text[i + 1] in '."”’)':
                    i += 1
                    buf.append(text[i])
                end = True
        if end:
            s = "".join(buf).strip()
            if s:
                out.append(s)
            buf = []
        i += 1
    rest = "".join(buf).strip()
    if rest:
        out.append(rest)
    return [s for s in out if re.search(rf"[A-Za-z0-9{_CJK}]", s)]


def latin_words(text: str) -> list[str]:
    return [w.lower().replace("’", "'") for w in _LATIN_WORD.findall(text)]


def latin_word_starts(text: str) -> list[int]:
    """Where each of ``latin_words(text)`` starts in ``text``."""
    return [m.start() for m in _LATIN_WORD.finditer(text)]


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """A light English stemmer: enough to match plurals and tenses in overlap measures.

    Kept for the last 65k words (a pure function of its word): a session's close stems the same few thousand
    words ~260k times (extraction, summary, social talk), a third of the heuristic LLM's CPU there."""
    w = word.lower().strip("'")
    for suffix, keep in (("ies", "y"), ("ing", ""), ("ied", "y"), ("ed", ""), ("es", ""), ("s", "")):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)] + keep
            break
    if len(w) > 3 and w.endswith("e"):  # move / moved / moving -> mov
        w = w[:-1]
    return w


def cjk_bigrams(text: str) -> list[str]:
    grams: list[str] = []
    for run in _CJK_RUN.findall(text):
        if len(run) == 1:
            if run not in ZH_STOPCHARS:
                grams.append(run)
            continue
        for k in range(len(run) - 1):
            g = run[k : k + 2]
            if not (g[0] in ZH_STOPCHARS and g[1] in ZH_STOPCHARS):
                grams.append(g)
    return grams


def content_terms(text: str) -> list[str]:
    """Topic-bearing terms in order: stemmed English content words, numbers, and Chinese bigrams."""
    terms = [stem(w) for w in latin_words(text) if w not in EN_STOPWORDS and len(w) > 1 or w.isdigit()]
    return terms + cjk_bigrams(text)


def term_set(text: str) -> set[str]:
    return set(content_terms(text))


def jaccard(a: Iterable[str], b: Iterable[str]) -> float:
    sa, sb = set(a), set(b)
    if not sa or not sb:
        return 0.0
    return len(sa & sb) / len(sa | sb)


def overlap(query_terms: set[str], doc_terms: set[str]) -> float:
    """Share of the query's terms that the document contains."""
    if not query_terms:
        return 0.0
    return len(query_terms & doc_terms) / len(query_terms)


def word_count(text: str) -> int:
    """English words plus Chinese characters / 2 (rounded up)."""
    return len(_LATIN_WORD.findall(text)) + math.ceil(len(CJK_RE.findall(text)) / 2)  # latin_words' count


def clean_surface(text: str) -> str:
    """Drop leading discourse markers, fillers and sentence-final particles; keep every content word."""
    s = text.strip()
    s = LEADING_DISCOURSE_EN.sub("", s)
    s = FILLERS_ZH.sub("", s)
    s = FILLERS_EN.sub("", s)
    s = FINAL_PARTICLES_ZH.sub("", s)
    s = re.sub(r"\s{2,}", " ", s).strip(" ,，、-")
    if s and s[0].isalpha() and s[0].islower() and s.isascii():
        s = s[0].upper() + s[1:]
    return s


def truncate_chars(text: str, limit: int) -> str:
    """At most ``limit`` characters, cut at a sentence or word boundary where possible, with an ellipsis."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    for sep in ("。", ". ", "！", "? ", "；", "; ", "，", ", ", " "):
        k = cut.rfind(sep)
        if k >= limit * 0.6:
            cut = cut[: k + (1 if sep.strip() else 0)]
            break
    return cut.rstrip(" ,，;；") + "…"


_ZH_SPLIT = re.compile(
    "["
    + "".join(sorted(ZH_STOPCHARS))
    + "]+|下週|下周|這週|这周|今天|明天|昨天|還是|还是|已經|已经|一直|因為|因为|所以|"
    "但是|可是|然後|然后|如果|什麼|什么|怎麼|怎么|問題|问题|有點|有点|一下|一起|現在|现在|之前|以後|以后|時候|时候"
)


def key_phrases(texts: list[str], limit: int = 5, weights: list[float] | None = None) -> list[str]:
    """Salient phrases of a text set: capitalized names, frequent content words, Chinese terms (runs between
    function characters), ranked by (weighted) frequency."""
    weights = weights or [1.0] * len(texts)
    scores: dict[str, float] = {}
    surface: dict[str, str] = {}
    for text, w in zip(texts, weights, strict=False):
        for m in re.finditer(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-zA-Z0-9]+(?:\s+[A-Z][a-zA-Z0-9]+)*)", text):
            name = m.group(1)
            if (
                name.lower() in EN_STOPWORDS
                or name.lower() in _CALENDAR
                or text[m.end() : m.end() + 1] == ":"
            ):
                continue
            scores[name.lower()] = scores.get(name.lower(), 0.0) + 1.5 * w
            surface[name.lower()] = name
        for word in latin_words(text):
            if word in EN_STOPWORDS or word in _CALENDAR or len(word) < 4 or word.isdigit():
                continue
            key = stem(word)
            scores[key] = scores.get(key, 0.0) + w
            surface.setdefault(key, word)
        for run in _CJK_RUN.findall(text):
            for term in _ZH_SPLIT.split(run):
                if 2 <= len(term) <= 6:
                    scores[term] = scores.get(term, 0.0) + 1.2 * w
                    surface[term] = term
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    out: list[str] = []
    for key, _ in ranked:
        phrase = surface[key]
        if any(phrase.lower() in o.lower() or o.lower() in phrase.lower() for o in out):
            continue
        out.append(phrase)
        if len(out) >= limit:
            break
    return out


def has_any(text: str, cues: Iterable[str]) -> list[str]:
    """The cues (regexes, case-insensitive) that occur in ``text``, in the order given.

    Most texts hold none of a list's cues, so one search of the cues joined as alternatives answers them first;
    only a text it matches is searched cue by cue. Dedup asks it of each item once per candidate (CHANGE_CUES,
    ~80 of them; one ``re.search`` a cue was a sixth of the bulk path's critical thread at 40k memories), so
    the last few thousand answers are kept (the same text and cues give the same answer)."""
    return list(_has_any(text, tuple(cues)))


@lru_cache(maxsize=4096)
def _has_any(text: str, cues: tuple[str, ...]) -> tuple[str, ...]:
    joined, each, needs = _cue_patterns(cues)
    if absent(needs, text):
        return ()  # none of the strings some cue needs: no cue can match (app/models/tasks/cue_filter.py)
    if joined.search(text) is None:
        return ()
    return tuple(c for c, pattern in zip(cues, each, strict=True) if pattern.search(text))


@lru_cache(maxsize=64)
def _cue_patterns(cues: tuple[str, ...]) -> tuple[re.Pattern[str], tuple[re.Pattern[str], ...],
                                                  re.Pattern[str] | None]:
    """A list of cues compiled (case-insensitive): all of them as one alternation, each on its own, and the
    strings one of which a text needs for any of them to match (:func:`cue_filter.literal_screen`)."""
    return (re.compile("|".join(f"(?:{c})" for c in cues) or r"(?!)", re.I),
            tuple(re.compile(c, re.I) for c in cues), literal_screen(cues))
