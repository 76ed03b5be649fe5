"""The background track's routes, one vault each (``/v1/vaults/{vault}/...``): the dream (trigger, runs, schedule,
conflicts), the review queue, and the discovery inbox. Thin controllers: one service call each."""

from __future__ import annotations

from typing import Any, Literal

from litestar import Controller, Response, get, post, put
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import Parameter
from pydantic import BaseModel, ConfigDict, Field

from app.api.body import Real
from app.background import review
from app.db.queries import Q
from app.services import Services
from app.vaults import Vault, get_vault

ReviewStatus = Literal["PENDING", "CLAIMED", "APPROVED", "REJECTED"]
ConflictStatus = Literal["candidate", "applied", "queued", "kept", "rejected", "stale"]
DiscoveryKind = Literal["insight", "knowledge_gap", "cross_community", "indirect_strong"]


class ScheduleIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    timezone: str = Field(default="UTC", min_length=1, max_length=64,
                          description="IANA time zone of the vault's owner, e.g. Asia/Taipei")
    hour: int = Field(default=4, ge=0, le=23, description="Local hour at which the vault dreams")


class DecisionIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    by: str = Field(default="api", min_length=1, max_length=200, description="Who decides (shown in the audit)")
    note: str | None = Field(default=None, max_length=2000)


class ClaimIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    by: str = Field(min_length=1, max_length=200, description="Who takes the item")
    hours: float = Field(default=24, gt=0, le=24 * 30, description="How long the claim holds")


class DreamController(Controller):
    path = "/v1/vaults/{vault:str}/dream"
    tags = ["background"]

    @post("/", summary="Dream now: the five stages over this vault (dry_run: report only; now: ignore the gate)",
          status_code=200, responses={202: ResponseSpec(dict[str, Any], description="Queued for the worker "
                                                                                    "(background=true)")})
    async def trigger(self, vault: str, services: Services, v: Vault, dry_run: bool = False, now: bool = False,
                      background: bool = Parameter(default=False, description="queue it for the worker (202)")
                      ) -> Response[dict[str, Any]]:
        from app.background.dream import DreamLoop
        from app.worker.catalogue import defer_dream

        if background:
            await DreamLoop(services).check_gate(v, force=now)  # 409 saying what the gate misses
            async with services.db.transaction(v.id) as conn:
                job = await defer_dream(conn, vault_id=v.id, dry_run=dry_run, force=True, trigger="manual")
            return Response({"queued": job is not None, "job_id": job}, status_code=202)
        outcome = await DreamLoop(services).run(v, trigger="manual", dry_run=dry_run, force=now)
        return Response({**outcome.run, "resumed": outcome.resumed}, status_code=200)

    @get("/runs", summary="This vault's dreams, newest first: status, stage, per-stage statistics, report")
    async def runs(self, vault: str, services: Services, v: Vault,
                   limit: int = Parameter(default=20, ge=1, le=200),
                   before: int | None = Parameter(default=None, ge=1, le=2**63 - 1, description="ids below this one")
                   ) -> list[dict[str, Any]]:
        rows = await services.db.fetchall(Q.dream_runs, (limit, before),
                                          vault_id=v.id)
        return [r["r"] for r in rows]

    @get("/schedule", summary="When this vault dreams (local hour and time zone) and the dual gate now")
    async def schedule(self, vault: str, services: Services, v: Vault) -> dict[str, Any]:
        from app.background.dream import DreamLoop

        row = await services.db.fetchone(Q.dream_schedule, (v.id,), vault_id=v.id)
        return {**dict(row or {}), "gate": await DreamLoop(services).gate(v)}

    @put("/schedule", summary="Set the local hour and time zone of this vault's dream")
    async def set_schedule(self, vault: str, data: ScheduleIn, services: Services, v: Vault) -> dict[str, Any]:
        row = await services.db.fetchone(Q.set_dream_schedule,
                                         (v.id, data.timezone, data.hour))
        return dict(row or {})

    @get("/conflicts", summary="Pairs the contradiction scan found and what became of each")
    async def conflicts(self, vault: str, services: Services, v: Vault, status: ConflictStatus | None = None,
                        limit: int = Parameter(default=50, ge=1, le=500)) -> list[dict[str, Any]]:
        rows = await services.db.fetchall(Q.dream_conflicts, (status, limit),
                                          vault_id=v.id)
        return [r["c"] for r in rows]


class ReviewController(Controller):
    path = "/v1/vaults/{vault:str}/review"
    tags = ["background"]

    @get("/", summary="The review queue: changes the background track would not make alone")
    async def list(self, vault: str, services: Services, v: Vault, status: ReviewStatus | None = None,
                   kind: Literal["conflict", "lint"] | None = None,
                   limit: int = Parameter(default=50, ge=1, le=500),
                   before: int | None = Parameter(default=None, ge=1, le=2**63 - 1)) -> list[dict[str, Any]]:
        return await review.list_items(services.db, v.id, status=status, kind=kind, limit=limit, before=before)

    @get("/thresholds", summary="This vault's auto-approve rule per kind, as decisions have moved it")
    async def thresholds(self, vault: str, services: Services, v: Vault) -> list[dict[str, Any]]:
        return await review.thresholds(services.db, v.id)

    @post("/{item_id:int}/claim", summary="Take an item; the claim lapses after `hours` and it returns to PENDING")
    async def claim(self, vault: str, item_id: int, data: ClaimIn, services: Services, v: Vault) -> dict[str, Any]:
        return await review.claim(services.db, v.id, item_id, by=data.by, hours=data.hours)

    @post("/{item_id:int}/approve", summary="Approve: the proposed change is committed")
    async def approve(self, vault: str, item_id: int, services: Services, v: Vault,
                      data: DecisionIn | None = None) -> dict[str, Any]:
        d = data or DecisionIn()
        return await review.decide(services.db, v.id, item_id, approve=True, by=d.by, note=d.note)

    @post("/{item_id:int}/reject", summary="Reject: nothing changes, and the pair is not proposed again")
    async def reject(self, vault: str, item_id: int, services: Services, v: Vault,
                     data: DecisionIn | None = None) -> dict[str, Any]:
        d = data or DecisionIn()
        return await review.decide(services.db, v.id, item_id, approve=False, by=d.by, note=d.note)


class DiscoveryController(Controller):
    path = "/v1/vaults/{vault:str}/discoveries"
    tags = ["background"]

    @get("/", summary="The discovery inbox: insights, knowledge gaps and surprising links the dream found")
    async def list(self, vault: str, services: Services, v: Vault, kind: DiscoveryKind | None = None,
                   include_dismissed: bool = False,
                   limit: int = Parameter(default=50, ge=1, le=500)) -> list[dict[str, Any]]:
        rows = await services.db.fetchall(Q.discovery_page,
                                          (kind, include_dismissed, limit), vault_id=v.id)
        return [r["d"] for r in rows]

    @post("/{item_id:int}/dismiss", summary="Dismiss a finding (kept, no longer listed)", status_code=200)
    async def dismiss(self, vault: str, item_id: int, services: Services, v: Vault) -> dict[str, Any]:
        row = await services.db.fetchone(Q.discovery_dismiss, (item_id,), vault_id=v.id)
        return row["d"] if row else {}


class AttitudeIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    category: Literal["writing_style", "tech_choice", "design_principle", "pace", "aesthetic", "communication",
                      "learning", "tooling", "collaboration", "values"]
    statement: str = Field(min_length=1, max_length=2000)
    kind: Literal["preference", "fact"] = Field(
        default="preference", description="a fact supersedes the category's older facts; preferences coexist")
    confidence: Real = Field(default=0.7, ge=0, le=1)
    evidence: list[str] = Field(default_factory=list, max_length=50, description="session ids")


class SkillUseIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    amount: float = Field(default=1.0, ge=1e-6, le=10, description="experience this use adds")
    evidence: str | None = Field(default=None, max_length=200, description="the session it happened in")


class PersonalController(Controller):
    path = "/v1/vaults/{vault:str}"
    tags = ["background"]

    @get("/attitudes", summary="Attitudes by category, confidence decayed since last confirmed")
    async def attitudes(self, vault: str, services: Services, v: Vault, include_suppressed: bool = False) -> list[dict[str, Any]]:
        from app.background.personal import Personal

        async with services.db.transaction(v.id) as conn:
            return await Personal().attitudes(conn, include_suppressed=include_suppressed)

    @post("/attitudes", summary="State an attitude: corroborates the same statement or adds a version")
    async def add_attitude(self, vault: str, data: AttitudeIn, services: Services, v: Vault) -> dict[str, Any]:
        from app.background.personal import Personal

        async with services.db.transaction(v.id) as conn:
            return await Personal().upsert_attitude(conn, category=data.category, statement=data.statement,
                                                    kind=data.kind, confidence=data.confidence,
                                                    evidence=data.evidence)

    @get("/skills", summary="Skills with their level (L1-L3) and experience as of now")
    async def skills(self, vault: str, services: Services, v: Vault) -> list[dict[str, Any]]:
        from app.background.personal import Personal

        async with services.db.transaction(v.id) as conn:
            return await Personal().skills(conn)

    @post("/skills/{name:str}/use", summary="record_skill_use: one use of a skill")
    async def skill_use(self, vault: str, name: str, services: Services,
                        data: SkillUseIn | None = None) -> dict[str, Any]:
        from app.background.personal import Personal
        from app.errors import InvalidInput

        if not name.strip() or len(name) > 200:
            raise InvalidInput("a skill name is 1-200 characters", hint="e.g. POST .../skills/rust/use")
        v = await get_vault(services.db, vault)
        d = data or SkillUseIn()
        async with services.db.transaction(v.id) as conn:
            return await Personal().record_skill_use(conn, name, amount=d.amount, evidence=d.evidence)

    @get("/profile", summary="Interest profile: 7/30/90-day windows and the daily snapshots")
    async def profile(self, vault: str, services: Services, v: Vault,
                      days: int = Parameter(default=7, ge=1, le=90, description="snapshots to list")) -> dict[str, Any]:
        from app.background import profile

        async with services.db.transaction(v.id) as conn:
            return await profile.profile(conn, days=days)

    @get("/gaps", summary="Knowledge gaps: neighbours never touched, and questions that keep failing")
    async def gaps(self, vault: str, services: Services, v: Vault,
                   min_access: int = Parameter(default=3, ge=1, le=1000),
                   min_failures: int = Parameter(default=2, ge=1, le=1000)) -> dict[str, Any]:
        from app.background import profile

        async with services.db.transaction(v.id) as conn:
            return await profile.gaps(conn, min_access=min_access, min_failures=min_failures)

    @get("/lint", summary="Knowledge lint findings (structure, grounding, judge) and what became of each")
    async def lint(self, vault: str, services: Services, v: Vault,
                   status: Literal["open", "fixed", "queued", "dismissed"] | None = None,
                   level: Literal["structure", "grounding", "judge"] | None = None,
                   limit: int = Parameter(default=100, ge=1, le=500)) -> list[dict[str, Any]]:
        rows = await services.db.fetchall(Q.lint_findings,
                                          (status, level, limit), vault_id=v.id)
        return [r["f"] for r in rows]
