"""``recall(query, context)``: the read track's one entry point (REST, CLI, MCP, hooks and benchmarks call it).

QueryClassify -> PersonalizedRouter -> QueryTimeframe -> fast search + 11 stages (one SQL call) ->
SessionContinuity (the turns around the top hits, same stages) -> [slow: multi-query variants] ->
SpeakerMatch (the own turns of whom the question is about) -> SessionCohesion (the conversation found turn after
turn) -> rerank (gate, breaker) -> [funnel recipe] -> [slow: cascade recall, CRAG] -> read sanitize +
OutputFormatter -> write-back + recall_log. The fast path always runs; slow mode adds to it (seed 000: slow =
fast + extras).
A prefetched result (Slow Thinker) short-cuts everything but the sanitizer and the formatter.
"""

from __future__ import annotations

import asyncio
import logging
import time
from contextlib import contextmanager
from datetime import UTC, datetime
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from app.errors import InvalidInput
from app.read.classify import QueryClassify
from app.read.cohesion import SessionCohesion
from app.read.config import PROFILES, LayerPlan, ReadConfig, RecallOptions
from app.read.continuity import SessionContinuity
from app.read.formatter import Card, OutputFormatter, render
from app.read.rerank import RerankStage
from app.read.router import PersonalizedRouter
from app.read.sanitize import ReadSanitizer
from app.read.search import Candidate, FastSearch
from app.read.speaker import SpeakerMatch
from app.read.stats import COUNTERS
from app.read.timeframe import QueryTimeframe

if TYPE_CHECKING:
    from app.services import Services
    from app.vaults import Vault

MAX_QUERY_CHARS = 4000
log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RecallResult:
    cards: list[Card]
    cascade_cards: list[Card]
    meta: dict[str, Any]
    format: str = "cards"

    def render(self) -> dict[str, Any]:
        return render(self.cards, self.cascade_cards, self.format)

    @property
    def ids(self) -> list[int]:
        return [c.id for c in self.cards] + [c.id for c in self.cascade_cards]


@dataclass
class StageClock:
    ms: dict[str, float] = field(default_factory=dict)

    @contextmanager
    def stage(self, name: str):
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.ms[name] = round(self.ms.get(name, 0.0) + (time.perf_counter() - t0) * 1000, 3)

    @property
    def total(self) -> float:
        return round(sum(self.ms.values()), 3)


def _validate(query: str, options: RecallOptions, config: ReadConfig) -> tuple[str, int, int]:
    q = (query or "").strip()
    errors = []
    if not q:
        errors.append("query: must not be empty")
    if len(q) > MAX_QUERY_CHARS:
        errors.append(f"query: at most {MAX_QUERY_CHARS} characters")
    k = options.k if options.k is not None else config.default_k
    if not 1 <= k <= config.max_k:
        errors.append(f"k: between 1 and {config.max_k}")
    budget = options.token_budget if options.token_budget is not None else config.default_token_budget
    if budget < 1:
        errors.append("token_budget: at least 1")
    if options.format not in ("text", "json", "cards"):
        errors.append("format: one of text, json, cards")
    if options.thinking not in (None, "fast", "slow"):
        errors.append("thinking: fast or slow")
    if errors:
        raise InvalidInput("; ".join(errors))
    return q, k, budget


class ReadTrack:
    """The read pipeline, built once per Services and reused."""

    def __init__(self, services: Services, config: ReadConfig | None = None) -> None:
        self.services = services
        self.config = cfg = config or ReadConfig()
        self.classify = QueryClassify(services)
        self.router = PersonalizedRouter(services, alpha=cfg.router_alpha, min_samples=cfg.router_min_samples)
        self.search = FastSearch(services, cfg.search)
        self.timeframe = QueryTimeframe()
        self.continuity = SessionContinuity(cfg.continuity)
        self.speaker = SpeakerMatch(cfg.speaker)
        self.cohesion = SessionCohesion(cfg.cohesion)
        settings = services.settings
        self.rerank = RerankStage(services.reranker, gate=cfg.gate, failures=settings.breaker_failures,
                                  open_s=settings.breaker_open_s)
        self.formatter = OutputFormatter(cards_share=cfg.cards_share, long_tokens=cfg.long_tokens,
                                         near_dup_cos=cfg.near_dup_cos)
        self._pending: set[asyncio.Task] = set()

    def _touch(self, vault: Vault, ids: list[int]) -> None:
        """Write-back after answering: returned blocks' access_count + 1 (their HNSW entries make the update
        cost milliseconds, which the caller need not wait for). ``drain()`` waits for pending write-backs."""
        at = datetime.now(UTC)

        async def touch() -> None:
            try:
                # Access counts are not worth a WAL flush: commit without waiting for the disk.
                await self.services.db.fetchone(
                    "SELECT set_config('synchronous_commit', 'off', true) AS sync, "
                    "memvault.touch_blocks_v1(%s::bigint[], %s) AS n", (ids, at), vault_id=vault.id)
            except Exception:  # a lost access count must not fail anything; it is logged
                log.exception("recall write-back failed for vault %s", vault.id)
            finally:
                self._pending.discard(task)

        task = asyncio.get_running_loop().create_task(touch())
        self._pending.add(task)

    async def drain(self) -> None:
        while self._pending:
            await asyncio.gather(*list(self._pending), return_exceptions=True)

    @classmethod
    def of(cls, services: Services) -> ReadTrack:
        track = services.extras.get("read_track")
        if track is None:
            track = services.extras["read_track"] = cls(services)
        return track

    async def recall(self, vault: Vault, query: str, options: RecallOptions | None = None) -> RecallResult:
        from app.read.prefetch import SlowThinker

        options = options or RecallOptions()
        cfg = self.config
        query, k, budget = _validate(query, options, cfg)
        clock = StageClock()
        events: list[dict[str, Any]] = []
        sanitizer = ReadSanitizer()

        # Slow Thinker's cache first: a hit skips the pipeline, never the sanitizer.
        cacheable = options.use_prefetch and options.as_of is None and options.known_at is None \
            and options.thinking is None and options.funnel is None
        if cacheable:
            with clock.stage("prefetch"):
                hit = await SlowThinker.lookup(self.services, vault, query)
            if hit is not None:
                return await self._finish(vault, query, options, k, budget, hit.candidates, [], clock, events,
                                          sanitizer, hit.meta, prefetch_hit=True)

        cands, cascade, meta = await self.retrieve(vault, query, options, k, clock, events)
        return await self._finish(vault, query, options, k, budget, cands, cascade, clock, events, sanitizer, meta,
                                  prefetch_hit=False)

    async def retrieve(self, vault: Vault, query: str, options: RecallOptions, k: int, clock: StageClock,
                       events: list[dict[str, Any]]) -> tuple[list[Candidate], list[Candidate], dict[str, Any]]:
        """Everything before sanitize + format: ranked candidates, cascade candidates and the routing meta."""
        from app.read.cascade import CascadeRecall
        from app.read.crag import CragEvaluator
        from app.read.funnel import SelectionFunnel, multi_query

        cfg = self.config
        with clock.stage("embed"):
            qvec = self.services.embedder.embed_query(query)
        with clock.stage("classify"):
            cls = await self.classify(query, qvec)
        with clock.stage("route"):
            routed = await self.router(vault.id, cls.probs)
        profile = PROFILES[routed.intent]
        scoring = profile.scoring
        with clock.stage("timeframe"):
            timeframe = self.timeframe(query, options.as_of)
        if timeframe is not None:  # stage 1 measures age from the time the question names
            scoring = replace(scoring, **timeframe.params())
        thinking = options.thinking or profile.thinking
        plan = LayerPlan.for_mode(profile.mode, thinking)
        funnel_on = cfg.funnel.enabled if options.funnel is None else options.funnel
        limit = max(cfg.candidates, k, cfg.funnel.candidates if funnel_on else 0)
        gap = None
        cascade: list[Candidate] = []
        async with self.services.db.transaction(vault.id) as conn:
            with clock.stage("search"):
                cands = await self.search(conn, vault.id, query, qvec, scoring, as_of=options.as_of,
                                          known_at=options.known_at, limit=limit)
            with clock.stage("continuity"):
                cands = await self.continuity(conn, cands, qvec, scoring, as_of=options.as_of,
                                              known_at=options.known_at, limit=limit, events=events)
            if thinking == "slow":
                with clock.stage("multi_query"):
                    cands = await multi_query(self.services, self.search, conn, vault.id, query, cands,
                                              scoring, options, limit, cfg.funnel.variants, events)
                with clock.stage("gap"):
                    cur = await conn.execute("SELECT * FROM memvault.knowledge_gap_for_v1(%s)", (query,))
                    gap = await cur.fetchone()
        with clock.stage("speaker"):
            cands = self.speaker(query, cands, events)
        with clock.stage("cohesion"):
            cands = self.cohesion(cands, events)
        with clock.stage("rerank"):
            cands = await self.rerank(query, cands, profile.blend, events)
        if funnel_on:
            with clock.stage("funnel"):
                cands = await SelectionFunnel(self.services, cfg.funnel)(query, routed.intent, cands, events)
        crag = None
        if thinking == "slow":
            with clock.stage("cascade"):
                cascade = await CascadeRecall(self.services, cfg)(vault, query, qvec, cands, plan, scoring,
                                                                  options, events)
            with clock.stage("crag"):
                crag = await CragEvaluator(self.services)(query, cands[:5], events)
        meta = {
            "intent": routed.intent,
            "intent_confidence": cls.confidence,
            "intent_probs": routed.probs,
            "classifier": {"keyword": cls.keyword_intent, "archetype": cls.archetype_intent,
                           "threshold": cls.threshold, "llm_used": cls.llm_used, "llm_source": cls.llm_source},
            "router": {"bypassed": routed.bypassed, "samples": routed.samples},
            "mode": profile.mode.value,
            "thinking": thinking,
            "layers": {"blocks": plan.blocks, "triples": plan.triples, "communities": plan.communities},
            "funnel": funnel_on,
            "timeframe": None if timeframe is None else timeframe.meta(),
            "crag": crag,
            "knowledge_gap": None if gap is None else {
                "id": gap["id"], "query": gap["query"], "incorrect_count": gap["incorrect_count"],
                "first_seen_at": gap["first_seen_at"].isoformat()},
        }
        return cands, cascade, meta


    async def _finish(self, vault: Vault, query: str, options: RecallOptions, k: int, budget: int,
                      cands: list[Candidate], cascade: list[Candidate], clock: StageClock,
                      events: list[dict[str, Any]], sanitizer: ReadSanitizer, meta: dict[str, Any], *,
                      prefetch_hit: bool) -> RecallResult:
        with clock.stage("format"):
            packed = self.formatter.pack(cands, cascade, budget=budget, k=k, sanitize=sanitizer,
                                         cascade_k=self.config.cascade_k)
        ids = [c.id for c in packed.cards] + [c.id for c in packed.cascade_cards if c.id > 0]
        crag = meta.get("crag") or {}
        with clock.stage("writeback"):
            async with self.services.db.transaction(vault.id) as conn:
                import json

                cur = await conn.execute(
                    "SELECT * FROM memvault.record_recall_v1(%s::bigint[], %s, %s, %s, %s, %s::jsonb, %s, %s, %s, %s::jsonb, %s)",
                    (ids, query, meta.get("intent", "unknown"), meta.get("mode", "LOCAL"),
                     meta.get("thinking", "fast"), json.dumps(clock.ms), packed.tokens_used, crag.get("verdict"),
                     prefetch_hit, json.dumps(sanitizer.audits), False),
                )
                logged = await cur.fetchone()
        if options.writeback and ids:
            self._touch(vault, ids)
        COUNTERS.incr("recall.total")
        meta = {
            **meta,
            "prefetch_hit": prefetch_hit,
            "stage_ms": clock.ms,
            "total_ms": clock.total,
            "tokens": {"used": packed.tokens_used, "budget": budget, "utilization": packed.utilization,
                       "collapsed": packed.collapsed, "summarized": packed.summarized,
                       "dropped_for_budget": packed.dropped_for_budget},
            "events": events,
            "sanitize": {"hits": sanitizer.hits, "ruleset_version": sanitizer.version,
                         "redacted_ids": sorted(sanitizer.redacted_ids)},
            "recall_id": logged["recall_id"] if logged else None,
            "candidates": len(cands),
        }
        if logged and logged["gap_id"] is not None:
            meta["knowledge_gap_opened"] = logged["gap_id"]
        return RecallResult(packed.cards, packed.cascade_cards, meta, options.format)


async def recall(services: Services, vault: Vault, query: str, options: RecallOptions | None = None) -> RecallResult:
    """Recall memories of ``vault`` for ``query`` (see :class:`RecallOptions` for format, budget, times, thinking)."""
    return await ReadTrack.of(services).recall(vault, query, options)
