"""The rule record and the tiny helpers the rule tables use to build one."""

from __future__ import annotations

import re
from dataclasses import dataclass

FAMILIES = (
    "direct_instruction",
    "authority_impersonation",
    "role_declaration",
    "hidden_comment",
    "temporal_override",
    "encoded_payload",
    "jailbreak_roleplay",
    "exfiltration",
)

# How much one rule contributes to the verdict. A text is unsafe when the weights of its distinct rules sum to 1.0:
# one ``high`` rule, two ``medium`` rules, or a ``medium`` and two ``low`` ones. ``low`` rules are weak cues
# (a persona assignment, "begin your reply with") that are common in harmless chat and only count together.
SEVERITY_WEIGHT = {"high": 1.0, "medium": 0.6, "low": 0.3}
UNSAFE_THRESHOLD = 1.0

_FLAGS = re.IGNORECASE | re.MULTILINE


@dataclass(frozen=True, slots=True)
class Rule:
    """One detection rule: data, not code.

    ``cues`` are lower-case literals; the (comparatively expensive) regex only runs when one of them occurs in the
    lower-cased text (see ``app.safety.cues``: a word cue must start a word of the text; ``~x`` means "x anywhere").
    Every match of the regex must contain one of its cues, or the rule would miss. ``also``, when given, is a second
    cue list of which one must occur as well (both "your" and "instructions").
    ``redact`` says how much sanitize removes: ``"match"`` (the matched span) or ``"sentence"`` (from the match to the
    end of its sentence, because what follows an "ignore previous instructions" is the payload).
    """

    id: str
    family: str
    lang: str
    severity: str
    pattern: re.Pattern[str]
    cues: tuple[str, ...]
    redact: str = "sentence"
    note: str = ""
    also: tuple[str, ...] = ()
    lowered: re.Pattern[str] | None = None  # the same regex, case-sensitive, for the lower-cased text (``lowered``)


_RANGE = re.compile(r"(.)-(.)")


def lowered(pattern: re.Pattern[str]) -> re.Pattern[str] | None:
    """``pattern`` without IGNORECASE, for the lower-cased text, or None when that could match differently.

    Python's regex engine cannot skip ahead to a case-insensitive pattern's first letters and folds the case of
    every character it compares; on a text already lower-cased, the same pattern with its ASCII letters lower-cased
    (``D`` and ``d`` both match ``d`` there; ``[A-Z]`` and ``[a-z]`` both match every lower-case letter) finds the
    same matches two to three times faster. Escapes (``\\S``, ``\\x4A``) are kept as they are; a pattern with an
    inline flag (``(?-i:...)``), a named character (``\\N{...}``), a non-ASCII upper-case letter or a range from
    one case to the other keeps its original form. The ruleset uses this form only when lower-casing kept the
    text's length (offsets unchanged), on NFKC-folded text (no long s, no Kelvin sign).
    """
    source = pattern.pattern
    if not pattern.flags & re.IGNORECASE or "\\N{" in source:
        return None
    if "(?" in source.replace("(?:", "").replace("(?=", "").replace("(?!", "").replace("(?<=", "").replace("(?<!", ""):
        return None
    masked = re.sub(r"\\.", "__", source)
    for m in _RANGE.finditer(masked):  # [A-z] also holds [\]^_`: lower-casing its end would drop them
        low_end, high_end = m.group(1), m.group(2)
        if low_end.isupper() != high_end.isupper():
            return None
    out: list[str] = []
    i = 0
    while i < len(source):
        ch = source[i]
        if ch == "\\":
            out.append(source[i:i + 2])
            i += 2
            continue
        if ch.isupper() and not ch.isascii():
            return None
        out.append(ch.lower() if ch.isascii() else ch)
        i += 1
    return re.compile("".join(out), pattern.flags & ~re.IGNORECASE)


def rule(
    rule_id: str,
    family: str,
    lang: str,
    severity: str,
    regex: str,
    cues: tuple[str, ...] | list[str] | str,
    *,
    redact: str = "sentence",
    note: str = "",
    also: tuple[str, ...] = (),
    flags: int = _FLAGS,
) -> Rule:
    if family not in FAMILIES:
        raise ValueError(f"unknown family {family!r} in rule {rule_id}")
    if severity not in SEVERITY_WEIGHT:
        raise ValueError(f"unknown severity {severity!r} in rule {rule_id}")
    if isinstance(cues, str):
        cues = (cues,)
    compiled = re.compile(regex, flags)
    return Rule(
        id=rule_id,
        family=family,
        lang=lang,
        severity=severity,
        pattern=compiled,
        cues=tuple(c.lower() for c in cues),
        redact=redact,
        note=note,
        also=tuple(c.lower() for c in also),
        lowered=lowered(compiled),
    )
