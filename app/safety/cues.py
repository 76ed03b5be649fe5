"""A cheap pre-filter: which rule cues can occur in a text, without running a regex per rule.

A rule runs only when one of its cues occurs (``Rule.cues``). All cues live in one Aho-Corasick automaton
(``pyahocorasick``), so a text is read once, in C, whatever the number of cues:

* a one-word cue of at most six letters (``"ignor"``, ``"gib"``) must start a word of the text (the character before
  the match is not a letter), so "act" does not fire inside "fact";
* any other cue (a cue in a script written without spaces, a phrase such as ``"your reply"``, a longer word, ``"<|"``, ``"!["``, ``"'s email"``, Chinese
  ``"忽略"``, or a cue written with a leading ``~``, ``"~gpt"``: also inside a word, as in "HackGPT") is a plain
  substring.

The index may say "present" when the rule's regex will not match (a prefilter only has to be complete, not exact);
it never says "absent" when the cue is present.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import ahocorasick

_WORD_CUE = re.compile(r"^[^\W\d_]+$")
_LETTER = re.compile(r"[^\W\d_]")  # a letter of a word, as the rule regexes' \b sees words
# A one-word cue of this many letters must start a word; shorter and longer ones are substrings.
_MIN_WORD, _MAX_WORD = 3, 6
# Scripts written without spaces between words (or with combining marks): their cues are always substrings.
_UNSPACED = re.compile(r"[\u0600-\u06ff\u0900-\u097f\u0e00-\u0e7f\u1100-\u11ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff"
                       r"\uac00-\ud7af\uf900-\ufaff]")


class CueIndex:
    def __init__(self, cues: Iterable[str]) -> None:
        by_needle: dict[str, list[tuple[str, int, bool]]] = {}
        for cue in sorted(set(cues)):
            needle = cue[1:] if cue.startswith("~") else cue
            if needle:
                word_start = (not cue.startswith("~") and _MIN_WORD <= len(cue) <= _MAX_WORD
                              and _WORD_CUE.match(cue) is not None and not _UNSPACED.search(cue))
                by_needle.setdefault(needle, []).append((cue, len(needle), word_start))
        automaton = ahocorasick.Automaton()
        for needle, entries in by_needle.items():
            automaton.add_word(needle, tuple(entries))
        automaton.make_automaton()
        self._automaton = automaton

    def present(self, low: str) -> set[str]:
        """The cues that may occur in ``low`` (the lower-cased text)."""
        found: set[str] = set()
        for end, entries in self._automaton.iter(low):
            for cue, n, word_start in entries:
                if cue in found:
                    continue
                start = end - n + 1
                if word_start and start > 0 and _LETTER.match(low[start - 1]):
                    continue  # inside a word ("act" in "fact")
                found.add(cue)
        return found
