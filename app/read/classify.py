"""QueryClassify (seed 000, section I): six intents from two fused signals, an LLM only when unsure.

1. Keyword rules (about 0 ms): the cue table of the ``classify_intent`` task's heuristic twin (EN + ZH).
2. Archetype embeddings (a few ms): cosine of the query with example queries per intent, stored in
   ``memvault.intent_archetype`` (Chinese and English), turned into a distribution by a softmax.
3. The fused confidence is compared with a dynamic threshold (higher when the two signals disagree, lower when a
   strong keyword rule fired); below it, the configured LLM runs ``classify_intent`` and its answer is fused in.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from app.db.queries import Q
from app.models.tasks.classify_intent import CUES, ClassifyIntentInput, classify_intent_heuristic
from app.read.config import INTENTS

if TYPE_CHECKING:
    from app.services import Services


@dataclass(frozen=True, slots=True)
class ClassifyConfig:
    keyword_w: float = 0.55
    archetype_w: float = 0.45
    softmax_t: float = 0.05
    threshold: float = 0.45
    disagree_penalty: float = 0.10
    strong_rule_bonus: float = 0.10
    llm_w: float = 0.5


@dataclass(frozen=True, slots=True)
class Classification:
    intent: str
    confidence: float
    probs: dict[str, float]
    keyword_intent: str | None
    archetype_intent: str | None
    threshold: float
    llm_used: bool = False
    llm_source: str | None = None
    signals: dict[str, Any] = field(default_factory=dict)


class ArchetypeIndex:
    """The archetype vectors of one database and embedder, loaded once per service (filled on first use) and kept
    in ``services.archetypes`` (a standby's view shares its primary's)."""

    def __init__(self, intents: list[str], matrix: np.ndarray) -> None:
        self.intents = intents
        self.matrix = matrix  # (n, dim), unit rows

    @classmethod
    async def load(cls, services: Services) -> ArchetypeIndex:
        return await services.archetypes.get((services.db.url, services.embedder.name), lambda: cls._build(services))

    @classmethod
    async def _build(cls, services: Services) -> ArchetypeIndex:
        emb = services.embedder
        missing = await services.db.fetchall(Q.archetypes_to_embed, (emb.name,))
        if missing:
            vectors = await services.models.embed_documents(emb, [r["query"] for r in missing])
            await services.db.fetchone(
                Q.set_archetype_embeddings,
                (emb.name, [r["id"] for r in missing], list(vectors)),
            )
        rows = await services.db.fetchall(Q.archetypes, (emb.name,))
        if not rows:
            return cls([], np.zeros((0, emb.dim), dtype=np.float32))
        return cls([r["intent"] for r in rows], np.stack([_array(r["embedding"]) for r in rows]))

    def distribution(self, qvec: np.ndarray, temperature: float) -> tuple[dict[str, float], dict[str, float]]:
        """Per intent: the best cosine with its archetypes, and a softmax over those."""
        if not self.intents:
            return {}, {}
        sims = self.matrix @ qvec.astype(np.float32)
        best: dict[str, float] = {}
        for intent, s in zip(self.intents, sims.tolist()):
            best[intent] = max(best.get(intent, -1.0), s)
        m = max(best.values())
        exps = {i: math.exp((s - m) / temperature) for i, s in best.items()}
        z = sum(exps.values())
        return best, {i: v / z for i, v in exps.items()}


def _array(v) -> np.ndarray:
    return np.asarray(v.to_numpy() if hasattr(v, "to_numpy") else v, dtype=np.float32)


def keyword_distribution(query: str) -> tuple[dict[str, float], float]:
    """The keyword layer: evidence per intent (the twin's cue sums), normalized; and the strongest evidence."""
    out = classify_intent_heuristic(ClassifyIntentInput(query=query))
    scores = {i: float(out.scores.get(i, 0.0)) for i in INTENTS}
    if out.intent == "entity_lookup" and not any(scores.values()):
        scores["entity_lookup"] = 0.5  # a bare name
    total = sum(scores.values())
    if total <= 0:
        return {}, 0.0
    return {i: s / total for i, s in scores.items()}, max(scores.values())


class QueryClassify:
    """Keyword rules + archetype embeddings, fused; the LLM only below the dynamic threshold."""

    def __init__(self, services: Services, config: ClassifyConfig | None = None) -> None:
        self.services = services
        self.config = config or ClassifyConfig()

    async def __call__(self, query: str, qvec: np.ndarray) -> Classification:
        cfg = self.config
        kw, strongest = keyword_distribution(query)
        index = await ArchetypeIndex.load(self.services)
        arch_best, arch = index.distribution(qvec, cfg.softmax_t)
        if kw and arch:
            probs = {i: cfg.keyword_w * kw.get(i, 0.0) + cfg.archetype_w * arch.get(i, 0.0) for i in INTENTS}
        else:
            probs = {i: (kw or arch).get(i, 0.0) for i in INTENTS} if (kw or arch) else {"unknown": 1.0}
        kw_top = max(kw, key=kw.get) if kw else None
        arch_top = max(arch, key=arch.get) if arch else None
        threshold = cfg.threshold
        if kw_top and arch_top and kw_top != arch_top:
            threshold += cfg.disagree_penalty
        if strongest >= 1.0:
            threshold -= cfg.strong_rule_bonus
        intent = max(probs, key=probs.get)
        confidence = probs[intent]
        llm_used, llm_source = False, None
        if confidence < threshold:
            from app.models.tasks.classify_intent import CLASSIFY_INTENT

            traced = await self.services.llm.run_traced(CLASSIFY_INTENT, ClassifyIntentInput(query=query))
            llm_used, llm_source = True, traced.source
            if traced.source == "model":
                out = traced.output
                probs = {i: (1 - cfg.llm_w) * p for i, p in probs.items()}
                probs[out.intent] = probs.get(out.intent, 0.0) + cfg.llm_w * out.confidence
                z = sum(probs.values()) or 1.0
                probs = {i: p / z for i, p in probs.items()}
                intent = max(probs, key=probs.get)
                confidence = probs[intent]
        return Classification(
            intent=intent, confidence=round(confidence, 4), probs={i: round(p, 4) for i, p in probs.items()},
            keyword_intent=kw_top, archetype_intent=arch_top, threshold=round(threshold, 3),
            llm_used=llm_used, llm_source=llm_source,
            signals={"archetype_best": {i: round(s, 4) for i, s in arch_best.items()}},
        )
