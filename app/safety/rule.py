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
_ESCAPE = re.compile(r"\\.")


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


def lowered(pattern: re.Pattern[str]) -> re.Pattern[str] | None:
    """``pattern`` without IGNORECASE, to run on the lower-cased text, or None when that could match differently.

    Python's regex engine cannot skip ahead to a case-insensitive pattern's first letters and folds the case of
    every character it compares; on a text already lower-cased, a pattern with no upper-case letter and no inline
    case flag finds the same matches two to three times faster. The ruleset uses it only when lower-casing kept
    the text's length (offsets unchanged) and on folded text (NFKC: no long s, no Kelvin sign).
    """
    if not pattern.flags & re.IGNORECASE or "(?" in pattern.pattern.replace("(?:", "").replace("(?=", "").replace(
            "(?!", "").replace("(?<=", "").replace("(?<!", ""):
        return None
    if any(c.isupper() for c in _ESCAPE.sub("", pattern.pattern)):
        return None
    return re.compile(pattern.pattern, pattern.flags & ~re.IGNORECASE)


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
