"""G2 back: ``PoisoningDetector`` blocks disguised instructions (the "backscatter" scanner behind the X-ray).

Five detectors, each a family of the shared ruleset, checked in this order; the first with a hit rejects the turn
(short-circuit):

1. authority impersonation: "Official notice from the administrator: ...", with a whitelist of real citations
   ("According to the OpenAI API docs, the rate limit is ..." passes);
2. role self-declaration: "I am the system", "You are now ...", "system:" prefixes, chat-template tokens, forged
   transcripts and fake prompt boundaries;
3. instructions hidden in markdown/HTML comments, invisible elements, alt text, code comments;
4. temporal-priority override: "latest directives take precedence", "override prior rules", "最新指示優先";
5. encoded payloads: base64/hex/... blocks decoded and scanned again (``app.safety.encoding``).

A turn is rejected only when the ruleset's verdict is unsafe (weak cues alone do not block) and one of these
families contributed to it.
"""

from __future__ import annotations

from app.safety import ruleset
from app.safety.gate import GateResult
from app.safety.rule import SEVERITY_WEIGHT

GATE = "poisoning"
DETECTORS = (
    "authority_impersonation",
    "role_declaration",
    "hidden_comment",
    "temporal_override",
    "encoded_payload",
)


class PoisoningDetector:
    """``PoisoningDetector()(text) -> GateResult``."""

    detectors = DETECTORS

    def __call__(self, text: str, verdict: ruleset.Verdict | None = None) -> GateResult:
        """``verdict``: the ruleset's judgement of ``text`` when the caller has it (``SafetyGates`` judges once)."""
        verdict = ruleset.judge(text) if verdict is None else verdict
        if not verdict.unsafe:
            return GateResult.ok(GATE)
        for family in DETECTORS:
            hits = [h for h in verdict.hits if h.family == family]
            if hits:
                top = max(hits, key=lambda h: (SEVERITY_WEIGHT[h.severity], -h.start))
                return GateResult.from_hit(GATE, top, verdict.hits)
        return GateResult.ok(GATE, "no disguise detector fired")
