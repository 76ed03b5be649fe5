"""Seed 003's selection funnel (a recipe switched on per call or by config) and multi-query decomposition.

Funnel: ~15 candidates -> similarity floor (~0.40, a cheap noise backstop) -> fit-gate (an LLM keep/drop per
candidate against the query's subject domain; fails open) -> provenance rank *after* the gate -> provenance-
preserving dedup -> token-cap backstop.

Multi-query (slow mode): the query is decomposed into 3-4 variants aimed at different neighbourhoods (its
subject without the request's framing, its names and titles, a declarative form), each searched and scored like
the original; results merge by CombSUM, the sum of a memory's weighted scores over the lists that found it (the
original query weighs 1.0, variants ``VARIANT_W``). Measured on the dev splits against the stemmed-terms variant
and a best-score merge: LongMemEval any@10 0.966 -> 0.983, all@10 0.914 -> 0.931, NDCG@10 0.878 -> 0.891; LoCoMo
coverage@10 0.690 -> 0.695. Either change alone gained nothing.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, ClassVar

from app.db.queries import Q
from app.read import rail2
from app.models.tasks.text import EN_STOPWORDS
from app.read.config import FunnelConfig
from app.read.context import ReadStage, RecallContext
from app.read.focus import focus
from app.read.formatter import count_tokens
from app.read.search import Candidate

if TYPE_CHECKING:
    import psycopg

    from app.read.config import ReadConfig
    from app.services import Services

VARIANT_W = 0.85
_QWORDS = re.compile(r"^\s*(what|when|where|who|whom|which|why|how( many| much| long| often)?|did|do|does|is|are|"
                     r"was|were|can|could|should|would|have|has|had)\b\s*", re.I)
_QUOTED = re.compile(r"\"[^\"]+\"|“[^”]+”")


def names(query: str) -> list[str]:
    """Quoted phrases and capitalized words other than a sentence's first word or a stopword ("I've", "Can")."""
    out = [m.strip('"“”') for m in _QUOTED.findall(query)]
    for sentence in re.split(r"(?<=[.!?])\s+", _QUOTED.sub(" ", query)):
        words = sentence.split()
        for w in words[1:]:
            w = w.strip(".,;:!?()[]'\"“”")
            if w[:1].isupper() and w.lower() not in EN_STOPWORDS:
                out.append(w)
    return list(dict.fromkeys(n for n in out if n))


def decompose(query: str, n: int = 4, common: frozenset[str] = frozenset()) -> list[str]:
    """The original plus up to n - 1 deterministic variants (no model needed), distinct and non-empty: the
    subject without the request's framing, the names (but the ``common`` ones), a declarative form."""
    variants = [query, focus(query), " ".join(x for x in names(query) if x not in common)]
    declarative = _QWORDS.sub("", query).rstrip("?？ ").strip()
    if declarative and declarative.lower() != query.lower():
        variants.append(declarative)
    out: list[str] = []
    for v in variants:
        if v and v.lower() not in {o.lower() for o in out}:
            out.append(v)
    return out[:n]


def merge(lists: list[tuple[float, list[Candidate]]], limit: int) -> list[Candidate]:
    """CombSUM: a memory's score is the sum of its weighted scores over the lists that found it, so what the
    question and its variants agree on rises (each list keeps its own best candidate object)."""
    total: dict[int, float] = {}
    best: dict[int, tuple[float, Candidate]] = {}
    for weight, cands in lists:
        for c in cands:
            s = c.score * weight
            total[c.id] = total.get(c.id, 0.0) + s
            if c.id not in best or s > best[c.id][0]:
                best[c.id] = (s, c)
    merged = [best[i][1].with_score(t) for i, t in total.items()]
    return sorted(merged, key=lambda c: (-c.score, c.id))[:limit]


COMMON_NAME_FREQ = 0.25


async def common_names(conn: psycopg.AsyncConnection, found: list[str]) -> frozenset[str]:
    """The names held by more than ``COMMON_NAME_FREQ`` of the vault's memories (a phrase by its rarest word):
    searched alone, they name nothing in particular. In a transcript of two people, their names are each in
    ~40% of the memories, and the names variant of "What does Melanie do to destress?" returned whatever
    Melanie said, short phatic turns first (LoCoMo dev @10 0.781 -> 0.786 without them); the names that
    LongMemEval's questions carry ("Effective Time Management", "Coastal Homes") are in at most 17%."""
    if not found:
        return frozenset()
    cur = await conn.execute(Q.name_frequencies, (found,))
    return frozenset(r["name"] for r in await cur.fetchall()
                     if r["freq"] is not None and r["freq"] > COMMON_NAME_FREQ)


class MultiQuery(ReadStage):
    """Slow mode: the question's variants searched and scored like it, merged by CombSUM."""

    name: ClassVar[str] = "multi_query"
    needs_db: ClassVar[bool] = True

    def __init__(self, services: Services, config: ReadConfig) -> None:
        from app.read.search import FastSearch

        self.services = services
        self.search = FastSearch(services, config.search)
        self.n = config.funnel.variants

    @classmethod
    def build(cls, services: Services, config: ReadConfig) -> MultiQuery:
        return cls(services, config)

    async def __call__(self, ctx: RecallContext, first: list[Candidate]) -> list[Candidate]:
        query = ctx.query
        variants = decompose(query, self.n, await common_names(ctx.conn, names(query)))[1:]
        if not variants:
            return first
        embedder = self.services.embedder
        models = self.services.models
        vecs = await models.embed_documents(embedder, variants) if len(variants) > 1 else \
            [await models.embed_query(embedder, variants[0])]
        # The variants' second-rail vectors in one model call, when the rail runs for them (app/read/rail2.py).
        rail2_params = await rail2.search_params_many(self.services, variants) \
            if self.search.search.rail2_on(ctx.thinking, variant=True) else [None] * len(variants)
        lists: list[tuple[float, list[Candidate]]] = [(1.0, first)]
        for text, vec, params in zip(variants, vecs, rail2_params):
            lists.append((VARIANT_W, await self.search.find(ctx, text, vec, variant=True, rail2_params=params)))
        ctx.emit(variants=variants)
        return merge(lists, ctx.limit)


class SelectionFunnel(ReadStage):
    """Switched on per call (``RecallOptions.funnel``) or by ``FunnelConfig.enabled``: ``ctx.funnel``."""

    name: ClassVar[str] = "funnel"
    calls_models: ClassVar[bool] = True  # the LLM fit gate

    def __init__(self, services: Services, config: FunnelConfig | None = None) -> None:
        self.services = services
        self.config = config or FunnelConfig()

    @classmethod
    def build(cls, services: Services, config: ReadConfig) -> SelectionFunnel:
        return cls(services, config.funnel)

    def active(self, ctx: RecallContext) -> bool:
        return ctx.funnel

    async def __call__(self, ctx: RecallContext, cands: list[Candidate]) -> list[Candidate]:
        cfg, query = self.config, ctx.query
        wide = cands[: cfg.candidates]
        floored = [c for c in wide if c.cosine >= cfg.similarity_floor]
        kept = await self._fit_gate(ctx, query, ctx.intent, floored)
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
                ctx.count("funnel.token_cap")
                break
            used += t
            out.append(c)
        ctx.emit(retrieved=len(wide), after_floor=len(floored), after_gate=len(kept), after_dedup=len(deduped),
                 kept=len(out))
        return out

    async def _fit_gate(self, ctx: RecallContext, query: str, intent: str,
                        cands: list[Candidate]) -> list[Candidate]:
        if not cands:
            return cands
        from app.models.tasks.fit_gate import FIT_GATE, FitGateInput

        try:
            traced = await self.services.llm.run_traced(
                FIT_GATE, FitGateInput(query=query, intent=intent, candidates=[c.text for c in cands]))
        except Exception as exc:  # the gate fails open: an error keeps every candidate
            ctx.count("funnel.fit_gate_failed_open")
            ctx.emit(event="fit_gate_failed_open", detail=str(exc))
            return cands
        keep = set(traced.output.kept())
        return [c for i, c in enumerate(cands) if i in keep]
