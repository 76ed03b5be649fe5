"""The result every write gate returns (G1 ``NoiseFilter``, G2 ``InjectionGuard`` and ``PoisoningDetector``)."""

from __future__ import annotations

from dataclasses import dataclass

from app.safety.ruleset import RULESET_VERSION, RuleHit


@dataclass(frozen=True, slots=True)
class GateResult:
    passed: bool
    gate: str
    rule: str | None
    family: str | None
    reason: str
    ruleset_version: str

    @classmethod
    def ok(cls, gate: str, reason: str = "passed") -> GateResult:
        return cls(True, gate, None, None, reason, RULESET_VERSION)

    @classmethod
    def reject(cls, gate: str, rule: str, family: str, reason: str) -> GateResult:
        return cls(False, gate, rule, family, reason, RULESET_VERSION)

    @classmethod
    def from_hit(cls, gate: str, hit: RuleHit) -> GateResult:
        snippet = " ".join(hit.text.split())
        if len(snippet) > 80:
            snippet = snippet[:77] + "..."
        return cls.reject(gate, hit.rule_id, hit.family, f"{hit.family}: {snippet!r}")
