"""A cheap pre-filter: which rule cues can occur in a text, without running a regex per rule.

A rule runs only when one of its cues occurs (``Rule.cues``). Testing hundreds of substrings against every turn
costs more than the rules themselves, so cues are indexed once:

* a one-word cue (``"ignor"``, ``"genügt"``) matches the start of a word of the text: the text's word prefixes
  (3 to 6 characters) go into a set once per text, and the cues are looked up by intersecting two sets; a cue of
  several words (``"your reply"``) or longer than six characters is first looked up that way, then confirmed as a
  substring;
* any other cue (``"<|"``, ``"!["``, ``"'s email"``, Chinese ``"忽略"``), and a cue written with a leading ``~``
  (``"~gpt"``: also inside a word, as in "HackGPT"), is a plain substring test; the cues of scripts written without
  spaces (or with combining marks) are tested only when the text contains that script.

The index may say "present" when the full cue is not (a prefilter only has to be complete, not exact); it never
says "absent" when the cue is present.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_WORDS = re.compile(r"[^\W\d_]+")
_WORD_CUE = re.compile(r"^[^\W\d_]+(?: [^\W\d_]+)*$")
_MIN, _MAX = 3, 6
# Scripts without spaces between words: their cues are substrings, tested only when the script is present.
_SCRIPTS = {
    "cjk": re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"),
    "hangul": re.compile(r"[\uac00-\ud7af\u1100-\u11ff]"),
    "thai": re.compile(r"[\u0e00-\u0e7f]"),
    "devanagari": re.compile(r"[\u0900-\u097f]"),
    "arabic": re.compile(r"[\u0600-\u06ff]"),
}


def _script_of(cue: str) -> str | None:
    for name, rx in _SCRIPTS.items():
        if rx.search(cue):
            return name
    return None


class CueIndex:
    def __init__(self, cues: Iterable[str]) -> None:
        self._by_first: dict[str, list[tuple[str, tuple[str, ...], bool]]] = {}
        self._raw: list[str] = []
        self._star: list[tuple[str, str]] = []
        self._scripted: dict[str, list[str]] = {}
        for cue in sorted(set(cues)):
            if cue.startswith("~"):
                self._star.append((cue, cue[1:]))
                continue
            script = _script_of(cue)
            if script is not None:
                self._scripted.setdefault(script, []).append(cue)
                continue
            parts = tuple(p[:_MAX] for p in cue.split(" ") if len(p) >= _MIN) if _WORD_CUE.match(cue) else ()
            if parts:
                exact = " " in cue or len(cue) > _MAX  # phrases and long words: confirm as a substring
                self._by_first.setdefault(parts[0], []).append((cue, parts[1:], exact))
            else:
                self._raw.append(cue)
        self._keys = frozenset(self._by_first)
        self._lengths = tuple(sorted({len(k) for k in self._keys}))

    def present(self, low: str) -> set[str]:
        """The cues that may occur in ``low`` (the lower-cased text)."""
        words = set(_WORDS.findall(low))
        lengths = self._lengths
        prefixes = {w[:k] for w in words for k in lengths}
        found: set[str] = set()
        for key in prefixes & self._keys:
            for cue, rest, phrase in self._by_first[key]:
                if not phrase or (all(p in prefixes for p in rest) and cue in low):
                    found.add(cue)
        found.update(c for c in self._raw if c in low)
        found.update(c for c, sub in self._star if sub in low)
        if not low.isascii():
            for script, cues in self._scripted.items():
                if _SCRIPTS[script].search(low):
                    found.update(c for c in cues if c in low)
        return found
