"""Reranking behind the AttentionGate and the circuit breaker (seed 000, section IV).

- AttentionGate skips the reranker when there are 2 or fewer candidates, when the top score dominates, or when the
  scores are tightly clustered.
- The breaker opens after 3 consecutive failures and stays open 600 s (settings ``breaker_failures`` /
  ``breaker_open_s``); while open, results keep their scoring order.
- Blending: ``scoring_w x scoring + rerank_w x rerank``, both min-max normalized over the reranked set
  (0.3 / 0.7 by default, 0.2 / 0.8 for entity_lookup, 0.5 / 0.5 for exploratory).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from app.errors import CircuitOpen, ModelError
from app.models.breaker import CircuitBreaker
from app.read.config import GateConfig, RerankBlend
from app.read.context import ReadStage, RecallContext
from app.read.search import Candidate

if TYPE_CHECKING:
    from app.models.base import Reranker
    from app.read.config import ReadConfig
    from app.services import Services


@dataclass(frozen=True, slots=True)
class GateDecision:
    rerank: bool
    reason: str  # "too_few" | "dominant" | "clustered" | "open"


class AttentionGate:
    def __init__(self, config: GateConfig | None = None) -> None:
        self.config = config or GateConfig()

    def __call__(self, candidates: list[Candidate]) -> GateDecision:
        cfg = self.config
        if len(candidates) < cfg.min_candidates:
            return GateDecision(False, "too_few")
        scores = sorted((c.score for c in candidates[: cfg.top_n]), reverse=True)
        s1, s2, lo = scores[0], scores[1], scores[-1]
        if s1 <= 0:
            return GateDecision(False, "clustered")
        if (s1 - s2) / s1 > cfg.dominance_ratio:
            return GateDecision(False, "dominant")
        if (s1 - lo) / s1 < cfg.cluster_spread:
            return GateDecision(False, "clustered")
        return GateDecision(True, "open")


def _minmax(xs: list[float]) -> list[float]:
    lo, hi = min(xs), max(xs)
    if hi - lo < 1e-12:
        return [1.0 for _ in xs]
    return [(x - lo) / (hi - lo) for x in xs]


def blend(candidates: list[Candidate], rerank_scores: list[float], weights: RerankBlend) -> list[Candidate]:
    """Blend normalized scoring and rerank scores; the reranked head is re-sorted, the tail keeps its order below."""
    head = candidates[: len(rerank_scores)]
    tail = candidates[len(rerank_scores):]
    s_norm = _minmax([c.score for c in head])
    r_norm = _minmax(rerank_scores)
    floor = head[-1].score if head else 0.0
    blended = []
    for c, s, r, raw in zip(head, s_norm, r_norm, rerank_scores):
        mixed = weights.scoring_w * s + weights.rerank_w * r
        # Keep the head above the tail: map [0, 1] onto [floor, floor + top score].
        blended.append(c.with_score(floor + mixed * max(head[0].score, 1e-9), rerank=raw))
    blended.sort(key=lambda c: (-c.score, c.id))
    return blended + tail


class RerankStage(ReadStage):
    """Gate -> breaker -> reranker -> blend (the intent profile's weights); records what happened as events."""

    name: ClassVar[str] = "rerank"

    def __init__(self, reranker: Reranker | None, *, gate: GateConfig | None = None, failures: int = 3,
                 open_s: float = 600.0, breaker: CircuitBreaker | None = None) -> None:
        self.reranker = reranker
        self.calls_models = reranker is not None  # the recall's transaction is closed while it scores
        self.gate = AttentionGate(gate)
        self.breaker = breaker or (CircuitBreaker(f"read.rerank:{reranker.name}", failures, open_s)
                                   if reranker is not None else None)

    @classmethod
    def build(cls, services: Services, config: ReadConfig) -> RerankStage:
        settings = services.settings
        breaker = (services.breakers.get(f"read.rerank:{services.reranker.name}", settings.breaker_failures,
                                         settings.breaker_open_s) if services.reranker is not None else None)
        return cls(services.reranker, gate=config.gate, breaker=breaker)

    async def __call__(self, ctx: RecallContext, candidates: list[Candidate]) -> list[Candidate]:
        query, weights = ctx.query, ctx.profile.blend if ctx.profile is not None else RerankBlend()
        if self.reranker is None or self.breaker is None:
            ctx.emit(event="skip", reason="no_reranker")
            ctx.count("rerank.skip.no_reranker")
            return candidates
        decision = self.gate(candidates)
        if not decision.rerank:
            ctx.emit(event="skip", reason=decision.reason)
            ctx.count(f"rerank.skip.{decision.reason}")
            return candidates
        head = candidates[: self.gate.config.top_n]
        trips_before = self.breaker.trips
        try:
            self.breaker.acquire()
        except CircuitOpen as exc:
            ctx.emit(event="breaker_open", detail=exc.message)
            ctx.count("rerank.breaker_open")
            return candidates
        try:
            scores = await self.reranker.score(query, [c.text for c in head])
            if len(scores) != len(head):
                raise ModelError(f"reranker returned {len(scores)} scores for {len(head)} texts")
        except CircuitOpen as exc:  # the backend's own breaker
            self.breaker.release()
            ctx.emit(event="breaker_open", detail=exc.message)
            ctx.count("rerank.breaker_open")
            return candidates
        except Exception as exc:  # any backend failure degrades to the scoring order
            self.breaker.record_failure(exc)
            ctx.count("rerank.failure")
            ctx.emit(event="failure", detail=f"{type(exc).__name__}: {exc}")
            if self.breaker.trips > trips_before:
                ctx.count("rerank.trip")
                ctx.emit(event="breaker_trip", state=self.breaker.state)
            return candidates
        self.breaker.record_success()
        ctx.count("rerank.blend")
        ctx.emit(event="blend", scoring_w=weights.scoring_w, rerank_w=weights.rerank_w, n=len(head))
        return blend(candidates, [float(s) for s in scores], weights)
