"""What a cue regex cannot match without: the strings one of which every match of it contains.

``has_any`` (app/models/tasks/text.py) searches a sentence for a list of case-insensitive cue regexes, and most
sentences hold none of them. A session's close asks it of every sentence and clause for six cue lists
(``categorize``), and Python's regex engine, case-insensitive, tries every alternative of a list at every position
of the text: a third of the heuristic extraction's CPU. Most cues need a word ("decided", "remind me", "maybe"):
when the text, lower-cased, contains none of a list's needed strings, no cue of the list can match it, and the
search is skipped.

Exact, not approximate: :func:`needed` reads the cue's parse tree (``re._parser``, the tree ``re.compile`` itself
builds) and returns strings one of which every match must contain, or ``None`` when it cannot say (a cue made of
classes and repeats only). The check compares lower-cased strings with ``in``, which is what a case-insensitive
match is only when every character of the text is ASCII or has no case at all (CJK, punctuation, the curly
apostrophe): a cased non-ASCII letter may match an ASCII one under ``re.I`` ("ſ" matches "s", "İ" matches "i")
while lower-casing does not map one onto the other. So :func:`plain` admits only such texts (any other text is
searched as before), and a needed string may hold a cased non-ASCII letter only if no ASCII character matches it
(then a plain text cannot hold what it matches, and ``in`` rightly finds nothing).
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import product

from re import _constants as c  # type: ignore[attr-defined]  # the parser's opcodes (re's own)
from re import _parser  # type: ignore[attr-defined]

_MAX_STRINGS = 64  # a cue's exact language is expanded up to this many strings (alternations of a few words)
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
_ZERO_WIDTH = (c.AT, c.ASSERT, c.ASSERT_NOT)

Strings = frozenset[str]


def needed(pattern: str) -> Strings | None:
    """Lower-cased strings one of which every match of ``pattern`` contains (any flags, ``re.I`` included), or
    ``None`` when no such set is known (or one of them is empty, or of cased non-ASCII characters)."""
    _, need = _sequence(_parser.parse(pattern).data)
    if need is None or not need or any(not s or not all(map(_comparable, s)) for s in need):
        return None
    return frozenset(s.lower() for s in need)


def list_needed(patterns: tuple[str, ...]) -> tuple[str, ...] | None:
    """The union of the cues' needed strings (a text without any of them matches none of the cues), or ``None``
    when one cue has none."""
    out: set[str] = set()
    for p in patterns:
        need = needed(p)
        if need is None:
            return None
        out |= need
    return tuple(sorted(out))


def plain(text: str) -> bool:
    """Every character ASCII or without case: then ``re.I`` matches a literal exactly when ``lower()`` equals."""
    if text.isascii():
        return True
    rest = "".join(_NON_ASCII.findall(text))
    return rest.lower() == rest == rest.upper()


@lru_cache(maxsize=1024)
def _comparable(ch: str) -> bool:
    """A needed string's character that ``in`` on lower-cased text compares as ``re.I`` would for a :func:`plain`
    text: ASCII, without case, or a cased letter no ASCII character matches ("é"; not "ſ", which matches "s")."""
    if ch.isascii() or ch.lower() == ch == ch.upper():
        return True
    return not any(re.fullmatch(re.escape(ch), chr(a), re.I) for a in range(128))


def _sequence(items: list) -> tuple[Strings | None, Strings | None]:
    """(the exact language of the sequence if finite and small, the best needed set found in it)."""
    run: Strings = frozenset({""})  # the exact strings of the items since the last inexact one
    exact_all: Strings | None = frozenset({""})
    best: Strings | None = None
    for op, av in items:
        exact, need = _item(op, av)
        if exact is not None:
            longer = _concat(run, exact)
            if longer is None:  # too many strings: what the run holds so far is still needed; a new one starts
                best = _better(best, run)
                longer = exact
            run = longer
            exact_all = _concat(exact_all, exact) if exact_all is not None else None
            continue
        best = _better(best, run)
        best = _better(best, need)
        run = frozenset({""})
        exact_all = None
    best = _better(best, run)
    return exact_all, best


def _item(op: object, av: object) -> tuple[Strings | None, Strings | None]:
    if op in _ZERO_WIDTH:
        return frozenset({""}), None
    if op is c.LITERAL:
        return frozenset({chr(av)}), None  # type: ignore[arg-type]
    if op is c.IN:
        if not all(o is c.LITERAL for o, _ in av):  # type: ignore[union-attr]  # ranges, classes, negation
            return None, None
        chars = [chr(v) for _, v in av]  # type: ignore[union-attr]
        return (frozenset(chars), None) if 0 < len(chars) <= 8 else (None, None)
    if op is c.SUBPATTERN:
        return _sequence(av[3].data if hasattr(av[3], "data") else av[3])  # type: ignore[index]
    if op is c.BRANCH:
        parts = [_sequence(alt.data if hasattr(alt, "data") else alt) for alt in av[1]]  # type: ignore[index]
        exact = (frozenset().union(*(e for e, _ in parts))
                 if all(e is not None for e, _ in parts) else None)
        if exact is not None and len(exact) > _MAX_STRINGS:
            exact = None
        needs = [n for _, n in parts]
        need = frozenset().union(*needs) if all(n for n in needs) else None  # type: ignore[arg-type]
        return exact, need
    if op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
        lo, hi, sub = av  # type: ignore[misc]
        exact, need = _sequence(sub.data if hasattr(sub, "data") else sub)
        if exact is not None and hi <= 4:  # "'?", "(?:very )?", "x{2}": each count of repeats, spelled out
            out: Strings = frozenset()
            power: Strings | None = frozenset({""})
            for k in range(hi + 1):
                if power is None:
                    break
                if k >= lo:
                    out |= power
                power = _concat(power, exact) if k < hi else power
            if power is not None and len(out) <= _MAX_STRINGS:
                return out, None
        return None, need if lo >= 1 else None
    if op is c.ATOMIC_GROUP:
        return _sequence(av.data if hasattr(av, "data") else av)  # type: ignore[union-attr]
    return None, None  # any character, classes, back references, conditionals: nothing known


def _concat(a: Strings, b: Strings) -> Strings | None:
    if len(a) * len(b) > _MAX_STRINGS:
        return None
    return frozenset(x + y for x, y in product(a, b))


def _better(a: Strings | None, b: Strings | None) -> Strings | None:
    """The more selective of two needed sets: the longer shortest string, then fewer strings."""
    if not b or "" in b:
        return a
    if not a:
        return b
    ka, kb = (min(map(len, a)), -len(a)), (min(map(len, b)), -len(b))
    return b if kb > ka else a


def literal_screen(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    """The needed strings of ``patterns`` (:func:`list_needed`) as one case-sensitive search of literals (the
    engine skips ahead to their first characters), for :func:`absent`; ``None`` when a pattern has none."""
    needs = list_needed(patterns)
    return None if needs is None else re.compile("|".join(map(re.escape, needs)) or r"(?!)")


def absent(screen: re.Pattern[str] | None, text: str) -> bool:
    """True when no pattern ``screen`` was made from can match ``text`` case-insensitively (False: it may)."""
    return screen is not None and plain(text) and screen.search(text.lower()) is None
