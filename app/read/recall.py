"""``recall(query, context)``: the read track's one entry point (REST, CLI, MCP, hooks and benchmarks call it).

The context first: embed -> QueryClassify -> PersonalizedRouter -> QueryTimeframe give the frozen
:class:`~app.read.context.RecallContext` (intent profile, scoring, thinking mode, layers, limit). Then the thinking
mode's recipe (``ReadConfig.recipes`` in :mod:`app.read.config`, run by :mod:`app.read.pipeline`): fast search +
11 stages (one SQL call) -> SessionContinuity -> [slow: multi-query variants, knowledge gap] -> SpeakerMatch ->
SessionCohesion -> rerank (gate, breaker) -> [funnel] -> [slow: cascade recall, CRAG]. Then read sanitize +
OutputFormatter -> write-back + recall_log. The fast path always runs; slow mode adds to it (seed 000: slow =
fast + extras).
A shortcut (the Slow Thinker's prefetch cache, :mod:`app.read.prefetch`, given by ``Services``) is asked first:
a hit skips the pipeline, never the sanitizer and the formatter.
Before the models run, the fast search's sparse side (it needs no vector and nothing a model decides) is sent
ahead on a connection of its own (:mod:`app.read.ahead`, ``ReadConfig.sparse_ahead``), with the shortcut's probe;
the search takes its rankings when they answer exactly what it asks.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol

from app.db.queries import Q
from app.errors import InvalidInput
from app.read.classify import QueryClassify
from app.read.config import PROFILES, LayerPlan, ReadConfig, RecallOptions
from app.read.context import RecallContext, StageClock
from app.read.formatter import Card, OutputFormatter, render
from app.read.pipeline import Pipeline
from app.read.router import PersonalizedRouter
from app.read.sanitize import ReadSanitizer
from app.read.schemas import MAX_QUERY_CHARS
from app.read.ahead import SparseAhead
from app.read.search import Candidate, FastSearch
from app.read.spread import asks_many
from app.read.timeframe import QueryTimeframe, asks_when
from app.read.unit import RecallUnit
from app.safety.verdict import RULES

if TYPE_CHECKING:
    from app.services import Services
    from app.vaults import Vault

__all__ = ["Prefetched", "ReadTrack", "RecallResult", "Shortcut", "StageClock", "recall"]

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


@dataclass(frozen=True, slots=True)
class Prefetched:
    """Candidates found ahead of time for this question, and the meta of the recall that found them."""

    candidates: list[Candidate]
    meta: dict[str, Any]


class Shortcut(Protocol):
    """Asked before the pipeline when ``applies(options)``; a hit is formatted instead of a fresh retrieval."""

    def applies(self, options: RecallOptions) -> bool: ...

    def probe(self, query: str) -> bytes:
        """The key the recall's sparse side sends the probe with (app/read/ahead.py)."""

    async def lookup(self, vault: Vault, query: str, unit: RecallUnit | None = None,
                     ahead: SparseAhead | None = None) -> Prefetched | None:
        """The prefetched answer: the row ``ahead`` brought back when the probe went with it, else read on the
        recall's ``unit`` (RecallUnit.execute)."""


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
    """The read pipeline, built once per Services (``services.read``) and reused."""

    def __init__(self, services: Services, config: ReadConfig | None = None, *,
                 shortcut: Shortcut | None = None) -> None:
        self.services = services
        self.config = cfg = config or ReadConfig()
        self.shortcut = shortcut
        self.classify = QueryClassify(services)
        self.router = PersonalizedRouter(services, alpha=cfg.router_alpha, min_samples=cfg.router_min_samples)
        self.timeframe = QueryTimeframe(day_first=services.settings.day_first)
        self.pipeline = Pipeline(services, cfg)
        self.formatter = OutputFormatter(cards_share=cfg.cards_share, long_tokens=cfg.long_tokens,
                                         near_dup_cos=cfg.near_dup_cos)
        self._pending: set[asyncio.Task] = set()
        # The sparse side sent ahead of the models (app/read/ahead.py): FastSearch builds its request; the
        # NoiseFilter tags every profile scores with (None when they differ: nothing is sent ahead).
        self._search = FastSearch(services, cfg.search)
        tags = {(replace(p.scoring, **dict(cfg.scoring_overrides)) if cfg.scoring_overrides else p.scoring).noise_tags
                for p in PROFILES.values()}
        self._noise_tags = next(iter(tags)) if len(tags) == 1 else None

    def _touch(self, vault: Vault, ids: list[int]) -> None:
        """A standby's write-back, after answering: returned blocks' access_count + 1 on the primary (a standby
        cannot write; the primary's own recalls write it back with their log). ``drain()`` waits for pending
        write-backs."""
        at = datetime.now(UTC)

        async def touch() -> None:
            try:
                # Access counts are not worth a WAL flush: commit without waiting for the disk.
                # One round trip: BEGIN, scope, the update and COMMIT sent together (its result is not read).
                async with self.services.writer.transaction(vault.id, pipeline=True) as conn:  # the primary's
                    await conn.execute(Q.touch_blocks, (ids, at))
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
        """The service's own read track (``services.read``)."""
        return services.read

    async def recall(self, vault: Vault, query: str, options: RecallOptions | None = None) -> RecallResult:
        options = options or RecallOptions()
        query, k, budget = _validate(query, options, self.config)
        clock = StageClock()
        sanitizer = ReadSanitizer()
        # The sparse side sent ahead (PostgreSQL runs it while the process embeds and classifies); the models
        # (embed, classify), with no transaction open; then one unit of work in the vault: the shortcut (Slow
        # Thinker's cache: a hit skips the pipeline, never the sanitizer), the pipeline, the log.
        ahead = self._ahead(vault, query, options, k)
        try:
            ctx = await self.context(vault, query, options, k, clock, budget=budget, ahead=ahead)
            async with RecallUnit(self.services.db, vault.id) as unit:
                if self.shortcut is not None and self.shortcut.applies(options):
                    with clock.stage("prefetch"):
                        hit = await self.shortcut.lookup(vault, query, unit, ahead)
                    if hit is not None:
                        return await self._finish(unit, vault, query, options, k, budget, hit.candidates, [], clock,
                                                  [], sanitizer, hit.meta, prefetch_hit=True)
                cands = await self.pipeline.run(ctx, unit=unit)
                return await self._finish(unit, vault, query, options, k, budget, cands,
                                          ctx.found.get("cascade", []), clock, ctx.events, sanitizer, self.meta(ctx),
                                          prefetch_hit=False)
        finally:
            if ahead is not None:
                await ahead.settle()

    def _ahead(self, vault: Vault, query: str, options: RecallOptions, k: int) -> SparseAhead | None:
        """The sparse side of the recall's search sent now, before the models run (app/read/ahead.py), when its
        request can be known without them: the vault's size is in ``services.vault_sizes`` and every intent
        profile has the same NoiseFilter tags (they do: the seed's seven). The shortcut's probe goes with it when
        the shortcut applies (one round trip fewer: round 6 of docs/recall-cpu.md)."""
        n = self.services.vault_sizes.get(vault.id)
        if not self.config.sparse_ahead or n is None or self._noise_tags is None:
            return None
        request = self._search.request(query, n, self._limit(query, options, k), self._noise_tags, options.as_of,
                                       options.known_at)
        probe = self.shortcut.probe(query) if self.shortcut is not None and self.shortcut.applies(options) else None
        return SparseAhead.start(self.services.db, vault.id, request, probe)

    def _limit(self, query: str, options: RecallOptions, k: int, gathers: bool | None = None) -> int:
        """How many scored candidates the search returns: the read track's, k, the funnel's, SessionSpread's."""
        cfg = self.config
        funnel_on = cfg.funnel.enabled if options.funnel is None else options.funnel
        gathers = asks_many(query) if gathers is None else gathers
        return max(cfg.candidates, k, cfg.funnel.candidates if funnel_on else 0,
                   cfg.spread.candidates if cfg.spread.enabled and gathers else 0)

    async def context(self, vault: Vault, query: str, options: RecallOptions, k: int, clock: StageClock, *,
                      budget: int | None = None, ahead: SparseAhead | None = None) -> RecallContext:
        """Embed, classify, route and read the question's timeframe: the recall's frozen context."""
        cfg = self.config
        with clock.stage("embed"):
            qvec = await self.services.models.embed_query(self.services.embedder, query)
        with clock.stage("classify"):
            cls = await self.classify(query, qvec)
        with clock.stage("route"):
            routed = await self.router(vault.id, cls.probs)
        profile = PROFILES[routed.intent]
        scoring = replace(profile.scoring, **dict(cfg.scoring_overrides)) if cfg.scoring_overrides \
            else profile.scoring
        with clock.stage("timeframe"):
            timeframe = self.timeframe(query, options.as_of)
        if timeframe is not None:  # stage 1 measures age from the time the question names
            scoring = replace(scoring, **timeframe.params())
        elif asks_when(query):  # when something happened: an event's time, not the latest state of things
            scoring = replace(scoring, recency_w=scoring.when_recency_w, decay_w=scoring.when_decay_w,
                              dated_w=scoring.when_dated_w)
        gathers = asks_many(query)
        if gathers and scoring.gather_dedup_cos != scoring.dedup_cos:
            scoring = replace(scoring, dedup_cos=scoring.gather_dedup_cos)
        thinking = options.thinking or profile.thinking
        funnel_on = cfg.funnel.enabled if options.funnel is None else options.funnel
        return RecallContext(
            query=query, vault=vault, qvec=qvec, intent=routed.intent, classification=cls, routed=routed,
            profile=profile, scoring=scoring, thinking=thinking, plan=LayerPlan.for_mode(profile.mode, thinking),
            as_of=options.as_of, known_at=options.known_at, timeframe=timeframe, gathers=gathers,
            limit=self._limit(query, options, k, gathers), k=k, budget=budget, funnel=funnel_on,
            services=self.services, config=cfg, clock=clock, ahead=ahead)

    async def retrieve(self, ctx: RecallContext) -> list[Candidate]:
        """Everything before sanitize + format: the thinking mode's recipe; cascade cards in ``ctx.found``."""
        return await self.pipeline.run(ctx)

    @staticmethod
    def meta(ctx: RecallContext) -> dict[str, Any]:
        """How the recall was routed and what its stages found besides candidates (the response's ``meta``)."""
        cls, routed, plan = ctx.classification, ctx.routed, ctx.plan
        return {
            "intent": ctx.intent,
            "intent_confidence": cls.confidence,
            "intent_probs": routed.probs,
            "classifier": {"keyword": cls.keyword_intent, "archetype": cls.archetype_intent,
                           "threshold": cls.threshold, "llm_used": cls.llm_used, "llm_source": cls.llm_source},
            "router": {"bypassed": routed.bypassed, "samples": routed.samples},
            "mode": ctx.profile.mode.value,
            "thinking": ctx.thinking,
            "layers": {"blocks": plan.blocks, "triples": plan.triples, "communities": plan.communities},
            "funnel": ctx.funnel,
            "timeframe": None if ctx.timeframe is None else ctx.timeframe.meta(),
            "asks_when": ctx.timeframe is None and asks_when(ctx.query),
            "crag": ctx.found.get("crag"),
            "knowledge_gap": ctx.found.get("knowledge_gap"),
        }

    async def _finish(self, unit: RecallUnit, vault: Vault, query: str, options: RecallOptions, k: int, budget: int,
                      cands: list[Candidate], cascade: list[Candidate], clock: StageClock,
                      events: list[dict[str, Any]], sanitizer: ReadSanitizer, meta: dict[str, Any], *,
                      prefetch_hit: bool) -> RecallResult:
        with clock.stage("format"):
            sanitizer.know(cands)  # stored verdicts (app.safety.verdict): a clean content skips the rules
            packed = self.formatter.pack(cands, cascade, budget=budget, k=k, sanitize=sanitizer,
                                         cascade_k=self.config.cascade_k)
        ids = [c.id for c in packed.cards] + [c.id for c in packed.cascade_cards if c.id > 0]
        crag = meta.get("crag") or {}
        standby = self.services.primary is not None
        with clock.stage("writeback"):
            # On the primary, the write-back (returned blocks' access_count + 1, in the narrow block_usage table)
            # is part of the log's statement, in the unit's transaction: no transaction of its own (a pool
            # checkout, BEGIN, scope and COMMIT: ~1 ms of CPU a recall). A standby cannot write: its recall's log
            # is queued for the primary and the write-back sent there after answering (_touch).
            params = (ids, query, meta.get("intent", "unknown"), meta.get("mode", "LOCAL"),
                      meta.get("thinking", "fast"), json.dumps(clock.ms), packed.tokens_used, crag.get("verdict"),
                      prefetch_hit, json.dumps(sanitizer.audits), options.writeback and not standby)
            if standby:  # a standby's view: queued for the primary's next batch
                await unit.close()
                logged = await self.services.log_recall(vault.id, params)
            else:
                # The log is one statement scoping itself (record_recall_v2), or, when a stage opened the unit's
                # transaction, its plain twin sent with the COMMIT: one round trip either way, its row read once
                # committed. With it go the verdicts the sanitizer's rules gave on contents that had none for
                # today's rules (app.safety.verdict), kept with the blocks.
                verdicts = sanitizer.new_verdicts(cands)
                if unit.current is not None and verdicts[0]:
                    await unit.current.execute(Q.set_read_verdicts, (verdicts[0], RULES, *verdicts[1:]))
                cur = await unit.execute(Q.record_recall, Q.record_recall_scoped, params, extra=(RULES, *verdicts))
                await unit.close()
                logged = await cur.fetchone()
        if standby and options.writeback and ids:
            self._touch(vault, ids)
        self.services.read_counters.incr(vault.id, "recall.total")
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
    return await services.read.recall(vault, query, options)
