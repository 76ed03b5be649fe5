"""Seed 003's selection funnel (a recipe switched on per call or by config) and multi-query decomposition.

Funnel: ~15 candidates -> similarity floor (~0.40, a cheap noise backstop) -> fit-gate (an LLM keep/drop per
candidate against the query's subject domain; fails open) -> provenance rank *after* the gate -> provenance-
preserving dedup -> token-cap backstop.

Multi-query (slow mode): the query is decomposed into 3-4 variants aimed at different neighbourhoods (the
concept's terms, its names and phrases, a declarative form), each searched and scored like the original; results
merge by best weighted score (the original query weighs 1.0, variants ``VARIANT_W``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any
from uuid import UUID

from app.models.tasks.text import content_terms
from app.read.config import FunnelConfig, RecallOptions, ScoringConfig
from app.read.formatter import count_tokens
from app.read.search import Candidate
from app.read.stats import COUNTERS

if TYPE_CHECKING:
    import psycopg

    from app.read.search import FastSearch
    from app.services import Services

VARIANT_W = 0.85
_QWORDS = re.compile(r"^\s*(what|when|where|who|whom|which|why|how( many| much| long| often)?|did|do|does|is|are|"
                     r"was|were|can|could|should|would|have|has|had)\b\s*", re.I)
_NAMES = re.compile(r"\b[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+)*|\"[^\"]+\"|“[^”]+”")


def decompose(query: str, n: int = 4) -> list[str]:
    """The original plus up to n - 1 deterministic variants (no model needed), distinct and non-empty."""
    variants = [query]
    terms = content_terms(query)
    if terms:
        variants.append(" ".join(dict.fromkeys(terms)))
    names = [m.strip('"“”') for m in _NAMES.findall(query) if m.lower() not in {"i", "what", "when", "how", "who"}]
    if names:
        variants.append(" ".join(dict.fromkeys(names)))
    declarative = _QWORDS.sub("", query).rstrip("?？ ").strip()
    if declarative and declarative.lower() != query.lower():
        variants.append(declarative)
    out: list[str] = []
    for v in variants:
        if v and v.lower() not in {o.lower() for o in out}:
            out.append(v)
    return out[:n]


def merge(lists: list[tuple[float, list[Candidate]]], limit: int) -> list[Candidate]:
    best: dict[int, Candidate] = {}
    for weight, cands in lists:
        for c in cands:
            s = c.score * weight
            if c.id not in best or s > best[c.id].score:
                best[c.id] = c.with_score(s) if weight != 1.0 else c
    return sorted(best.values(), key=lambda c: (-c.score, c.id))[:limit]


async def multi_query(services: Services, search: FastSearch, conn: psycopg.AsyncConnection, vault_id: UUID,
                      query: str, first: list[Candidate], scoring: ScoringConfig, options: RecallOptions,
                      limit: int, n: int, events: list[dict[str, Any]]) -> list[Candidate]:
    variants = decompose(query, n)[1:]
    if not variants:
        return first
    vecs = services.embedder.embed_documents(variants) if len(variants) > 1 else \
        [services.embedder.embed_query(variants[0])]
    lists: list[tuple[float, list[Candidate]]] = [(1.0, first)]
    for text, vec in zip(variants, vecs):
        found = await search(conn, vault_id, text, vec, scoring, as_of=options.as_of, known_at=options.known_at,
                             limit=limit)
        lists.append((VARIANT_W, found))
    events.append({"stage": "multi_query", "variants": variants})
    return merge(lists, limit)


class SelectionFunnel:
    def __init__(self, services: Services, config: FunnelConfig | None = None) -> None:
        self.services = services
        self.config = config or FunnelConfig()

    async def __call__(self, query: str, intent: str, cands: list[Candidate],
                       events: list[dict[str, Any]]) -> list[Candidate]:
        cfg = self.config
        wide = cands[: cfg.candidates]
        floored = [c for c in wide if c.cosine >= cfg.similarity_floor]
        kept = await self._fit_gate(query, intent, floored, events)
        weights = dict(cfg.provenance)
        ranked = sorted(kept, key=lambda c: (-(weights.get(c.source_kind, 0.6) * c.score), c.id))
        deduped: list[Candidate] = []
        seen: dict[str, int] = {}
        for c in sorted(ranked, key=lambda c: -weights.get(c.source_kind, 0.6)):
            key = " ".join(c.text.lower().split())
            if key not in seen:
                seen[key] = c.id
        deduped = [c for c in ranked if seen.get(" ".join(c.text.lower().split())) == c.id]
        out, used = [], 0
        for c in deduped:
            t = count_tokens(c.text)
            if used + t > cfg.token_cap:
                COUNTERS.incr("funnel.token_cap")
                break
            used += t
            out.append(c)
        events.append({"stage": "funnel", "retrieved": len(wide), "after_floor": len(floored),
                       "after_gate": len(kept), "after_dedup": len(deduped), "kept": len(out)})
        return out

    async def _fit_gate(self, query: str, intent: str, cands: list[Candidate],
                        events: list[dict[str, Any]]) -> list[Candidate]:
        if not cands:
            return cands
        from app.models.tasks.fit_gate import FIT_GATE, FitGateInput

        try:
            traced = await self.services.llm.run_traced(
                FIT_GATE, FitGateInput(query=query, intent=intent, candidates=[c.text for c in cands]))
        except Exception as exc:  # the gate fails open: an error keeps every candidate
            COUNTERS.incr("funnel.fit_gate_failed_open")
            events.append({"stage": "funnel", "event": "fit_gate_failed_open", "detail": str(exc)})
            return cands
        keep = set(traced.output.kept())
        return [c for i, c in enumerate(cands) if i in keep]
