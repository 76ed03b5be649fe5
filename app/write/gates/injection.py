"""G2 front: ``InjectionGuard`` blocks plain prompt injection in a turn before it can become a memory.

It owns the families of direct attacks: instructions that cancel earlier ones or hijack the answer
(``direct_instruction``), persona jailbreaks (``jailbreak_roleplay``) and requests for the system prompt, secrets or
private data (``exfiltration``). The disguised attacks are ``PoisoningDetector``'s (G2 back). Both read the one
shared ruleset (``app.safety.ruleset``), so read-time sanitize applies exactly these rules to old memories.
"""

from __future__ import annotations

from app.safety import ruleset
from app.safety.gate import GateResult
from app.safety.rule import SEVERITY_WEIGHT

GATE = "injection"
FAMILIES = ("direct_instruction", "jailbreak_roleplay", "exfiltration")


class InjectionGuard:
    """``InjectionGuard()(text) -> GateResult``."""

    families = FAMILIES

    def __call__(self, text: str, verdict: ruleset.Verdict | None = None) -> GateResult:
        """``verdict``: the ruleset's judgement of ``text`` when the caller has it (``SafetyGates`` judges once)."""
        verdict = ruleset.judge(text) if verdict is None else verdict
        if not verdict.unsafe:
            return GateResult.ok(GATE)
        own = [h for h in verdict.hits if h.family in FAMILIES]
        if not own:
            return GateResult.ok(GATE, "unsafe, but by disguise families: left to PoisoningDetector")
        others = [h for h in verdict.hits if h.family not in FAMILIES]
        top = max(own, key=lambda h: (SEVERITY_WEIGHT[h.severity], -h.start))
        if others and max(SEVERITY_WEIGHT[h.severity] for h in others) > SEVERITY_WEIGHT[top.severity]:
            return GateResult.ok(GATE, "unsafe mainly by disguise families: left to PoisoningDetector")
        return GateResult.from_hit(GATE, top, verdict.hits)
