"""PersonalizedRouter (seed 000): the vault's own intent habits re-weight the classifier's distribution.

``p_final = p_classify x (1 + alpha x intent_freq_norm)``, alpha = 0.25, where ``intent_freq_norm`` blends the
intent shares of the last 7, 30 and 90 days of ``recall_log`` (weights 0.5 / 0.3 / 0.2). Below 50 samples in 90
days the router is bypassed (cold start). The distribution is read at most once a minute per vault.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING
from uuid import UUID

from app.caches import TtlCache
from app.db.queries import Q


if TYPE_CHECKING:
    from app.services import Services

WINDOW_WEIGHTS = {"d7": 0.5, "d30": 0.3, "d90": 0.2}


@dataclass(frozen=True, slots=True)
class Routed:
    intent: str
    probs: dict[str, float]
    bypassed: bool
    samples: int
    freq: dict[str, float]


def intent_freq_norm(rows: list[dict]) -> tuple[dict[str, float], int]:
    """Blended intent shares from per-intent counts over 7/30/90 days; and the 90-day sample count."""
    totals = {w: sum(int(r[w]) for r in rows) for w in WINDOW_WEIGHTS}
    freq: dict[str, float] = {}
    for r in rows:
        share = sum(wt * (int(r[w]) / totals[w] if totals[w] else 0.0) for w, wt in WINDOW_WEIGHTS.items())
        freq[r["intent"]] = share
    top = max(freq.values(), default=0.0)
    if top > 0:
        freq = {i: f / top for i, f in freq.items()}  # the most frequent intent gets the full alpha
    return freq, totals["d90"]


def personalize(probs: dict[str, float], freq: dict[str, float], samples: int, *, alpha: float = 0.25,
                min_samples: int = 50) -> Routed:
    if samples < min_samples or not freq:
        best = max(probs, key=probs.get)
        return Routed(best, probs, True, samples, freq)
    weighted = {i: p * (1 + alpha * freq.get(i, 0.0)) for i, p in probs.items()}
    z = sum(weighted.values()) or 1.0
    final = {i: p / z for i, p in weighted.items()}
    return Routed(max(final, key=final.get), final, False, samples, freq)


class PersonalizedRouter:
    """One per read track (so one per Services): each vault's intent habits, read at most once per ``ttl_s``."""

    def __init__(self, services: Services, *, alpha: float = 0.25, min_samples: int = 50, ttl_s: float = 60.0):
        self.services = services
        self.alpha = alpha
        self.min_samples = min_samples
        self.profiles: TtlCache[UUID, tuple[dict[str, float], int]] = TtlCache(ttl_s)

    async def profile(self, vault_id: UUID) -> tuple[dict[str, float], int]:
        hit = self.profiles.get(vault_id)
        if hit is not None:
            return hit
        rows = await self.services.db.fetchall(Q.intent_distribution, vault_id=vault_id)
        return self.profiles.put(vault_id, intent_freq_norm(rows))

    async def __call__(self, vault_id: UUID, probs: dict[str, float]) -> Routed:
        freq, samples = await self.profile(vault_id)
        return personalize(probs, freq, samples, alpha=self.alpha, min_samples=self.min_samples)

