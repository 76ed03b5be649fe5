"""DreamLoop (seed 004): five stages, in order, over one vault while nobody is talking to it.

- ``_orient``: what accumulated since the last dream (the dual gate's numbers, memories, triples), and the daily
  snapshot (``app.background.profile``).
- ``_gather_signal``: the contradiction scan (candidate pairs into ``dream_conflict``), multi-signal edge weights
  and Leiden communities (``app.background.communities``), surprise discovery (``app.background.discovery``),
  and graph centrality (the existing GraphCentrality job's code, for the vault if its graph changed).
- ``_reflect``: L2 community summaries; the ``reflect`` task reads a snapshot of the new memories, and its
  insights and knowledge gaps go to the discovery inbox.
- ``_consolidate``: the stored facts normalized (``app.background.normalize``: predicates to their canonical
  names, entity names cleaned, dates in ISO 8601, entities that are one merged), then temporal conflict
  resolution of every candidate pair (``app.background.tcr``): duplicates
  merged, contradictions superseded, the unsure and the high-impact queued for review; the knowledge lint's four
  levels (``app.background.lint``); preferences into attitudes
  and skill uses into skills (``app.background.personal``).
- ``_prune_and_report``: orphan entities removed, tiers and TierDigests, memories voted down and unused retracted
  (``app.background.tiering``), overdue review items returned to PENDING, the report.

Each stage commits its changes and the record that it completed in one transaction, so a run killed or failed
between stages resumes after the last completed one (``dream_begin_v1``) and a stage is never applied twice; the
stages are idempotent besides (a pair is judged once ever, a finding is added once ever). A dry run runs all five
in one transaction and rolls it back: its run row reports what would have changed. One dream per vault at a time
(a session advisory lock; a second one is refused with 409).
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import psycopg

from app.background.communities import Communities, MultiSignalEdges
from app.background.config import CommunityConfig, DreamConfig, EdgeConfig, PersonalConfig, TierConfig
from app.background.discovery import SurpriseDiscovery
from app.background.lint import KnowledgeLint
from app.background.normalize import FactNormalizer
from app.background.personal import Personal
from app.background.profile import write_snapshot
from app.background.tcr import TemporalConflictResolution
from app.background.tiering import TierDigest
from app.db.queries import Q
from app.errors import Conflict
from app.models.tasks import REFLECT, ReflectInput
from app.models.tasks.values import VALUE_PATTERN

if TYPE_CHECKING:
    from app.services import Services
    from app.vaults import Vault

log = logging.getLogger(__name__)

STAGES = ("orient", "gather_signal", "reflect", "consolidate", "prune_and_report")
ACTOR = "worker:dream"


@dataclass
class DreamContext:
    vault: Vault
    run_id: int
    dry_run: bool
    gate: dict[str, Any]  # the dual gate's numbers as the run began (dream_gate_v1)
    stats: dict[str, dict[str, Any]] = field(default_factory=dict)
    now: datetime | None = None  # the clock the gate, the snapshot, tiering and the review sweep read (None: now)

    @property
    def since(self) -> datetime | None:
        """The last finished dream's start: what is new to this one was recorded after it."""
        return self.gate["last_dream_at"]


@dataclass(frozen=True, slots=True)
class DreamOutcome:
    run: dict[str, Any]
    resumed: bool


class GateClosed(Conflict):
    """The dual gate is closed and the caller did not force the dream."""


class DreamLoop:
    def __init__(self, services: Services, config: DreamConfig | None = None, *, edges: EdgeConfig | None = None,
                 communities: CommunityConfig | None = None, personal: PersonalConfig | None = None,
                 tiers: TierConfig | None = None) -> None:
        self.services = services
        self.config = config or DreamConfig()
        self.edges = MultiSignalEdges(edges)
        self.communities = Communities(services, communities)
        self.discovery = SurpriseDiscovery()
        self.personal = Personal(personal)
        self.tiers = TierDigest(services.llm, tiers)
        self.lint = KnowledgeLint(services.llm, self.config)
        self.normalizer = FactNormalizer(self.config.normalize_limit, day_first=services.settings.day_first)
        self.tcr = TemporalConflictResolution(services.llm, services.judge_llm, self.config)

    # --- the run ------------------------------------------------------------------------------------------
    async def gate(self, vault: Vault, now: datetime | None = None) -> dict[str, Any]:
        cfg = self.config
        row = await self.services.db.fetchone(Q.dream_gate,
                                              (vault.id, now, cfg.gate_min_hours, cfg.gate_min_sessions),
                                              vault_id=vault.id)
        assert row is not None
        return dict(row)

    async def check_gate(self, vault: Vault, *, force: bool = False, now: datetime | None = None) -> dict[str, Any]:
        """The gate's numbers; GateClosed (409, saying what is missing) when it is closed and not ``force``."""
        gate = await self.gate(vault, now)
        if not force and not gate["open"]:
            hours = "never dreamed" if gate["last_dream_at"] is None else f"{gate['hours_since']:.1f} h since the last dream"
            raise GateClosed(
                f"the dream gate of vault {vault.name!r} is closed: {hours} (needs > {self.config.gate_min_hours:g}), "
                f"{gate['sessions_since']} sessions since (needs >= {self.config.gate_min_sessions})",
                hint="pass now=true (memvault dream --now) to dream anyway")
        return gate

    async def run(self, vault: Vault, *, trigger: str = "manual", dry_run: bool = False,
                  force: bool = False, now: datetime | None = None) -> DreamOutcome:
        """Dream ``vault`` now (``force``: whatever the gate says), or resume its unfinished dream. ``now`` replaces
        the database's clock for what the dream judges by time (the gate, the daily snapshot's day, tiers, prune,
        overdue reviews), so a test can live through nights and months; the run's own records keep real time."""
        db = self.services.db
        async with db.pool.connection() as lock_conn:
            cur = await lock_conn.execute(Q.dream_try_lock,
                                          (str(vault.id),))
            if not (await cur.fetchone())["ok"]:
                await lock_conn.rollback()
                raise Conflict(f"vault {vault.name!r} is dreaming already", hint="see GET .../dream/runs")
            await lock_conn.commit()
            try:
                return await self._run_locked(vault, trigger, dry_run, force, now)
            finally:
                await lock_conn.execute(Q.dream_unlock,
                                        (str(vault.id),))
                await lock_conn.commit()

    async def _run_locked(self, vault: Vault, trigger: str, dry_run: bool, force: bool,
                          now: datetime | None) -> DreamOutcome:
        db = self.services.db
        gate = await self.check_gate(vault, force=force, now=now)
        async with db.transaction(vault.id) as conn:
            cur = await conn.execute(Q.dream_begin, (trigger, dry_run))
            begun = await cur.fetchone()
        ctx = DreamContext(vault, int(begun["run_id"]), dry_run, gate, dict(begun["stats"] or {}), now)
        done = begun["stage"]
        todo = list(STAGES[STAGES.index(done) + 1:]) if done else list(STAGES)
        try:
            if dry_run:
                async with db.transaction(vault.id) as conn:
                    await self._actor(conn)
                    for stage in todo:
                        ctx.stats[stage] = await self._timed(stage, ctx, conn)
                    raise psycopg.Rollback()  # a dry run changes nothing
            else:
                for stage in todo:
                    async with db.transaction(vault.id) as conn:
                        await self._actor(conn)
                        ctx.stats[stage] = await self._timed(stage, ctx, conn)
                        await conn.execute(Q.dream_stage_done,
                                           (ctx.run_id, stage, json.dumps(ctx.stats[stage], default=str)))
        except Exception as exc:
            log.exception("dream of vault %s (run %d) failed", vault.name, ctx.run_id)
            await self._finish(ctx, "failed", None, f"{type(exc).__name__}: {exc}")
            raise
        report = self._report(ctx)
        run = await self._finish(ctx, "done", report, None)
        return DreamOutcome(run, bool(begun["resumed"]))

    async def _actor(self, conn: psycopg.AsyncConnection) -> None:
        await conn.execute(Q.set_actor, (ACTOR,))

    async def _timed(self, stage: str, ctx: DreamContext, conn: psycopg.AsyncConnection) -> dict[str, Any]:
        t0 = time.perf_counter()
        stats = await getattr(self, f"_{stage}")(ctx, conn)
        stats["ms"] = round((time.perf_counter() - t0) * 1000, 1)
        log.info("dream %s run %d: %s %s", ctx.vault.name, ctx.run_id, stage, stats)
        return stats

    async def _finish(self, ctx: DreamContext, status: str, report: dict | None, error: str | None) -> dict:
        async with self.services.db.transaction(ctx.vault.id) as conn:
            await conn.execute(Q.dream_finish,
                               (ctx.run_id, status, json.dumps(report, default=str) if report else None, error,
                                json.dumps(ctx.stats, default=str)))
            cur = await conn.execute(Q.dream_runs, (1, ctx.run_id + 1))
            return (await cur.fetchone())["r"]

    def _report(self, ctx: DreamContext) -> dict[str, Any]:
        s = ctx.stats
        consolidate = s.get("consolidate", {})
        return {
            "dry_run": ctx.dry_run,
            "conflicts": {"found": s.get("gather_signal", {}).get("conflicts_found", {}),
                          "resolved": consolidate.get("applied", {}), "queued": consolidate.get("queued", 0),
                          "stale": consolidate.get("stale", 0), "escalated": consolidate.get("escalated", 0)},
            "discoveries_added": s.get("reflect", {}).get("added", 0)
            + s.get("gather_signal", {}).get("discoveries", {}).get("added", 0),
            "personal": consolidate.get("personal", {}),
            "normalized": consolidate.get("normalized", {}),
            "lint": {k: consolidate.get("lint", {}).get(k) for k in ("found", "fixed", "queued")},
            "tiers": s.get("prune_and_report", {}).get("tiers", {}),
            "pruned": s.get("prune_and_report", {}).get("pruned", 0),
            "edges": s.get("gather_signal", {}).get("edges", {}),
            "communities": s.get("gather_signal", {}).get("communities", {}),
            "community_summaries": s.get("reflect", {}).get("summaries", 0),
            "orphans_removed": s.get("prune_and_report", {}).get("orphans", 0),
            "review_pending": s.get("prune_and_report", {}).get("review_pending", 0),
            "stage_ms": {k: v.get("ms") for k, v in s.items()},
        }

    # --- the five stages (each on the stage's own transaction) -----------------------------------------------
    async def _orient(self, ctx: DreamContext, conn: psycopg.AsyncConnection) -> dict[str, Any]:
        g = ctx.gate
        cur = await conn.execute(Q.dream_counts)
        counts = await cur.fetchone()
        snapshot = await write_snapshot(conn, (ctx.now or datetime.now(UTC)).astimezone(UTC).date())
        return {"last_dream_at": g["last_dream_at"], "hours_since": g["hours_since"],
                "sessions_since": g["sessions_since"], "blocks_since": g["blocks_since"], **counts,
                "snapshot": {"day": snapshot["day"], "recalls": snapshot["recalls"],
                             "top_entities": [e["name"] for e in snapshot["top_entities"][:5]]}}

    async def _gather_signal(self, ctx: DreamContext, conn: psycopg.AsyncConnection) -> dict[str, Any]:
        cfg = self.config
        cur = await conn.execute(Q.dream_conflict_scan, (
            ctx.run_id, None, ctx.since, list(cfg.scan_kinds), cfg.scan_min_cosine, cfg.scan_value_min_cosine,
            cfg.scan_neighbours, cfg.scan_limit, cfg.scan_max_new, cfg.scan_exact_below, VALUE_PATTERN))
        scan = (await cur.fetchone())["scan"]
        edges = await self.edges(conn)
        communities = await self.communities.detect(conn, ctx.run_id)
        discoveries = await self.discovery(conn, ctx.run_id)
        centrality: dict[str, Any] = {}
        if not ctx.dry_run:  # PageRank over the graph, as the graph_centrality job does (no-op when unchanged)
            from app.background.centrality import GraphCentrality

            reports = await GraphCentrality(self.services.db).score_due(ctx.vault.id)
            centrality = reports[0].as_dict() if reports else {"unchanged": True}
        return {"conflicts_found": scan["found"], "scan": {k: scan[k] for k in ("scanned", "unscanned", "exact")},
                "edges": edges, "communities": communities, "discoveries": discoveries,
                "centrality": centrality}

    async def _reflect(self, ctx: DreamContext, conn: psycopg.AsyncConnection) -> dict[str, Any]:
        cur = await conn.execute(Q.dream_snapshot,
                                 (ctx.since, list(self.config.scan_kinds), self.config.reflect_max_memories))
        memories = [r["content"] for r in await cur.fetchall()]
        summaries = await self.communities.summarize(conn)
        if not memories:
            return {"memories": 0, "insights": 0, "gaps": 0, "added": 0, **summaries}
        orient = ctx.stats.get("orient", {})
        out = await self.services.llm.run(REFLECT, ReflectInput(memories=memories, stats={
            k: orient[k] for k in ("sessions_since", "blocks_since") if orient.get(k) is not None}))
        items = [{"kind": "insight", "key": _key(i.text), "title": i.text, "score": i.confidence,
                  "detail": {"support": [memories[k][:200] for k in i.support[:5]]}} for i in out.insights]
        items += [{"kind": "knowledge_gap", "key": _key(g.topic), "title": g.topic, "score": 0.5,
                   "detail": {"reason": g.reason, "source": "reflect"}} for g in out.gaps]
        cur = await conn.execute(Q.discovery_add,
                                 (ctx.run_id, json.dumps(items)))
        added = (await cur.fetchone())["n"]
        return {"memories": len(memories), "insights": len(out.insights), "gaps": len(out.gaps), "added": added,
                **summaries}

    async def _consolidate(self, ctx: DreamContext, conn: psycopg.AsyncConnection) -> dict[str, Any]:
        normalized = await self.normalizer(conn, ctx.since)
        counts = await self.tcr.resolve_pending(conn, limit=self.config.scan_limit * 2)
        lint = await self.lint(conn, ctx.run_id, ctx.since)
        return {"normalized": normalized, **counts, "lint": lint,
                "personal": await self.personal.from_memories(conn, ctx.since)}

    async def _prune_and_report(self, ctx: DreamContext, conn: psycopg.AsyncConnection) -> dict[str, Any]:
        cur = await conn.execute(Q.prune_orphan_entities,
                                 (self.config.prune_orphans_limit, ctx.dry_run))
        orphans = (await cur.fetchone())["ids"]
        tiers = await self.tiers(conn, ctx.now)
        cur = await conn.execute(Q.review_sweep,
                                 (ctx.now, self.config.review_ttl_days))
        overdue = (await cur.fetchone())["n"]
        cur = await conn.execute(Q.review_open_count)
        pending = (await cur.fetchone())["n"]
        return {"orphans": len(orphans), "tiers": tiers["moves"], "pruned": tiers["pruned"], "review_overdue": overdue,
                "review_pending": pending}


def _key(text: str) -> str:
    return hashlib.sha1(" ".join(text.lower().split()).encode("utf-8")).hexdigest()[:20]

