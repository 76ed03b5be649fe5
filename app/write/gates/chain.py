"""``SafetyGates``: the one place where the write gates run in their fixed order, G1 then G2.

    NoiseFilter (G1)  ->  InjectionGuard (G2 front)  ->  PoisoningDetector (G2 back)  ->  [Dedup, G3: not here]

The order is not a detail: Dedup's MERGE folds a new block into an existing one, so anything that reaches it
spreads into clean memories. Noise goes first (cheap, and a dropped pleasantry needs no security scan); the two
G2 halves share one ruleset verdict (``app.safety.ruleset.judge``, computed once per text), so running both costs
one scan. ``embedding`` is the text's USE vector when the caller has one (the write track embeds every item anyway):
the semantic detector then embeds only the sentences it scores one by one.

``check(text)`` short-circuits and returns the first rejection (or a pass); the write pipeline calls it.
``evaluate(text)`` runs every gate without short-circuit, for the guard benchmark and for audit entries that want
to record what G2 would have said about a turn that G1 dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from app.safety import ruleset
from app.safety.gate import GateResult
from app.safety.ruleset import RULESET_VERSION
from app.safety.semantic import Embed
from app.write.gates.injection import InjectionGuard
from app.write.gates.noise import NoiseFilter
from app.write.gates.poisoning import PoisoningDetector

__all__ = ["ChainReport", "GateResult", "SafetyGates"]


@dataclass(frozen=True, slots=True)
class ChainReport:
    noise: GateResult
    injection: GateResult
    poisoning: GateResult

    @property
    def g2(self) -> GateResult:
        """G2's decision alone (injection first, then poisoning)."""
        if not self.injection.passed:
            return self.injection
        return self.poisoning

    @property
    def final(self) -> GateResult:
        """What ``SafetyGates.check`` returns for the same text."""
        for result in (self.noise, self.injection, self.poisoning):
            if not result.passed:
                return result
        return _PASSED


_PASSED = GateResult(True, "chain", None, None, "passed G1 noise and G2 injection/poisoning", RULESET_VERSION)


class SafetyGates:
    """G1 -> G2 for one turn. ``SafetyGates().check(text) -> GateResult``."""

    def __init__(
        self,
        noise: NoiseFilter | None = None,
        injection: InjectionGuard | None = None,
        poisoning: PoisoningDetector | None = None,
    ) -> None:
        self.noise = noise or NoiseFilter()
        self.injection = injection or InjectionGuard()
        self.poisoning = poisoning or PoisoningDetector()

    def check(self, text: str, embedding: np.ndarray | None = None, embed: Embed | None = None) -> GateResult:
        """``embedding``: the text's vector from the embedder the semantic detector reads; ``embed``: that
        embedder, for the sentences the detector scores one by one (default: the guard's own copy of it)."""
        result = self.noise(text)
        if not result.passed:
            return result
        verdict = ruleset.judge(text, embedding, embed)
        for gate in (self.injection, self.poisoning):
            result = gate(text, verdict)
            if not result.passed:
                return result
        return _PASSED

    def evaluate(self, text: str, embedding: np.ndarray | None = None) -> ChainReport:
        verdict = ruleset.judge(text, embedding)
        return ChainReport(self.noise(text), self.injection(text, verdict), self.poisoning(text, verdict))
