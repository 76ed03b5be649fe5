"""The result every write gate returns (G1 ``NoiseFilter``, G2 ``InjectionGuard`` and ``PoisoningDetector``).

A rejection says why in a form a person can check: the rule (or learned model) that decided, its family, the span
of the text that triggered it (``span``, ``evidence``), a learned model's probability (``score``), and every other
rule or model that fired on the text (``hits``). The write track puts all of it in the audit row of the rejected
write (``write.reject``).
"""

from __future__ import annotations

from dataclasses import dataclass

from app.safety.ruleset import RULESET_VERSION, RuleHit

EVIDENCE_CHARS = 160


@dataclass(frozen=True, slots=True)
class GateResult:
    passed: bool
    gate: str
    rule: str | None
    family: str | None
    reason: str
    ruleset_version: str
    span: tuple[int, int] | None = None
    evidence: str | None = None
    score: float | None = None
    hits: tuple[str, ...] = ()

    @classmethod
    def ok(cls, gate: str, reason: str = "passed") -> GateResult:
        return cls(True, gate, None, None, reason, RULESET_VERSION)

    @classmethod
    def reject(cls, gate: str, rule: str, family: str, reason: str) -> GateResult:
        return cls(False, gate, rule, family, reason, RULESET_VERSION)

    @classmethod
    def from_hit(cls, gate: str, hit: RuleHit, hits: tuple[RuleHit, ...] = ()) -> GateResult:
        snippet = " ".join(hit.text.split())
        short = snippet if len(snippet) <= 80 else snippet[:77] + "..."
        evidence = snippet if len(snippet) <= EVIDENCE_CHARS else snippet[: EVIDENCE_CHARS - 3] + "..."
        others = tuple(dict.fromkeys(f"{h.rule_id}:{h.severity}" for h in hits))
        score = f" (p={hit.score:.3f})" if hit.score is not None else ""
        return cls(False, gate, hit.rule_id, hit.family, f"{hit.family}: {short!r}{score}", RULESET_VERSION,
                   span=(hit.start, hit.end), evidence=evidence, score=hit.score, hits=others)

    def audit_detail(self) -> dict[str, object]:
        """The fields a rejection adds to its audit row."""
        return {"family": self.family, "span": list(self.span) if self.span else None, "evidence": self.evidence,
                "score": self.score, "hits": list(self.hits)}
