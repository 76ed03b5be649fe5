"""What every read stage sees: one frozen :class:`RecallContext` per recall, and the one stage protocol.

A stage is a small object with one call method, ``async (ctx, candidates) -> candidates``, built once per
:class:`~app.read.recall.ReadTrack` by ``Stage.build(services, config)``. The runner (:mod:`app.read.pipeline`)
times each stage and tells it its name (``ctx.stage``), so a stage records what it did with ``ctx.emit(...)``
and never handles timing or the events list itself. A stage that finds something other than ranked candidates
puts it in ``ctx.found`` (cascade recall's cards, CRAG's verdict, the knowledge gap).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

if TYPE_CHECKING:
    import numpy as np
    import psycopg

    from app.read.ahead import SparseAhead
    from app.read.classify import Classification
    from app.read.config import IntentProfile, LayerPlan, ReadConfig, ScoringConfig, Thinking
    from app.read.router import Routed
    from app.read.search import Candidate
    from app.read.timeframe import Timeframe
    from app.read.unit import RecallUnit, UnitTransaction
    from app.services import Services
    from app.vaults import Vault


@dataclass
class StageClock:
    """Milliseconds per stage name (a stage run twice adds up)."""

    ms: dict[str, float] = field(default_factory=dict)

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.ms[name] = round(self.ms.get(name, 0.0) + (time.perf_counter() - t0) * 1000, 3)

    @property
    def total(self) -> float:
        return round(sum(self.ms.values()), 3)


@dataclass(frozen=True, slots=True)
class RecallContext:
    """One recall's inputs, fixed before the first stage runs (``dataclasses.replace`` for a variant).

    ``conn`` is the open transaction of the stages that declare ``needs_db`` (None for the others, and for a
    ``scopes_itself`` stage when the recall has no transaction open: it sends through ``unit``); ``events``,
    ``found`` and ``clock`` are shared by every stage of the recall.
    """

    query: str
    vault: Vault | None = None
    qvec: np.ndarray | None = None
    intent: str = "unknown"
    classification: Classification | None = None  # how the intent was found (QueryClassify, PersonalizedRouter)
    routed: Routed | None = None
    profile: IntentProfile | None = None
    scoring: ScoringConfig | None = None
    thinking: Thinking = "fast"
    plan: LayerPlan | None = None
    as_of: datetime | None = None
    known_at: datetime | None = None
    timeframe: Timeframe | None = None  # the time the question names (QueryTimeframe), already in ``scoring``
    gathers: bool = False  # the question asks for many things gathered across occasions (spread.asks_many)
    limit: int = 30
    k: int = 10
    budget: int | None = None
    funnel: bool = False
    services: Services | None = None
    config: ReadConfig | None = None
    conn: psycopg.AsyncConnection | UnitTransaction | None = None
    unit: RecallUnit | None = None  # the recall's (app/read/unit.py), for the needs_db stages
    ahead: SparseAhead | None = None  # the sparse side sent ahead of the models (app/read/ahead.py), if it was
    clock: StageClock = field(default_factory=StageClock)
    events: list[dict[str, Any]] = field(default_factory=list)
    found: dict[str, Any] = field(default_factory=dict)
    stage: str | None = None

    def emit(self, **fields: Any) -> None:
        """Record an event of the running stage (``{"stage": <its name>, ...}``)."""
        self.events.append({"stage": self.stage, **fields})

    def count(self, name: str, n: int = 1) -> None:
        """Add ``n`` to the read counter ``name`` of this recall's vault (``services.read_counters``; the
        per-vault stats route reports them). A context made without services (a stage's unit test) counts
        nowhere."""
        if self.services is not None:
            self.services.read_counters.incr(self.vault.id if self.vault is not None else None, name, n)


class Stage(Protocol):
    """``async (ctx, candidates) -> candidates``. ``name`` keys its timing (``meta.stage_ms``) and its events;
    ``needs_db`` stages run inside one transaction of the recall (consecutive ones share it: ``ctx.conn``); a stage
    whose ``active(ctx)`` is false is skipped, untimed."""

    name: str
    needs_db: bool

    async def __call__(self, ctx: RecallContext, cands: list[Candidate]) -> list[Candidate]: ...

    def active(self, ctx: RecallContext) -> bool: ...


class ReadStage:
    """Defaults of the :class:`Stage` protocol; a stage module's class overrides ``build`` when it needs more
    than its own configuration."""

    name: ClassVar[str]
    needs_db: ClassVar[bool] = False
    # Waits on a model (an LLM, a reranker): run with the recall's transaction closed (app/read/unit.py).
    calls_models: bool = False
    # Sends statements that enter the vault's scope themselves (RecallUnit.execute): needs no transaction open.
    scopes_itself: ClassVar[bool] = False

    @classmethod
    def build(cls, services: Services, config: ReadConfig) -> ReadStage:
        return cls()

    def active(self, ctx: RecallContext) -> bool:
        return True
