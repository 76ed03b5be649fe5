"""The runner of the read track's recipes (``ReadConfig.recipes``, :mod:`app.read.config`).

Each recipe entry is a ``module:Class`` following the :class:`~app.read.context.Stage` protocol; every stage is
built once, when the read track is built. The runner times each stage under its name, tells it its name (so its
events carry it), skips an inactive one, and runs the ``needs_db`` stages on the recall's unit (app/read/unit.py):
in its transaction, or with none open for a stage that ``scopes_itself``; the unit is closed before a stage that
``calls_models``.
"""

from __future__ import annotations

import importlib
from dataclasses import replace
from typing import TYPE_CHECKING

from app.read.context import RecallContext, Stage
from app.read.unit import RecallUnit

if TYPE_CHECKING:
    from app.read.config import ReadConfig
    from app.read.search import Candidate
    from app.services import Services


def load_stage(ref: str) -> type:
    """The class a recipe entry names; a wrong entry is an ImportError / AttributeError, never skipped."""
    module, _, attr = ref.partition(":")
    if not attr:
        raise ValueError(f"recipe entry {ref!r}: expected 'module:Class'")
    return getattr(importlib.import_module(module), attr)


class Pipeline:
    def __init__(self, services: Services, config: ReadConfig) -> None:
        self.services = services
        built: dict[str, Stage] = {}
        self.recipes: dict[str, tuple[Stage, ...]] = {}
        for thinking, refs in config.recipes:
            for ref in refs:
                if ref not in built:
                    built[ref] = load_stage(ref).build(services, config)
            self.recipes[thinking] = tuple(built[ref] for ref in refs)

    async def run(self, ctx: RecallContext, cands: list[Candidate] | None = None, *,
                  unit: RecallUnit | None = None) -> list[Candidate]:
        """The recipe's stages in order; the database stages on ``unit``'s transaction (the recall's: its probe
        and log share it; else one of the run's own), which is closed before a stage that waits on a model."""
        stages = [s for s in self.recipes[ctx.thinking] if s.active(ctx)]
        out: list[Candidate] = list(cands or [])
        if unit is None and any(s.needs_db for s in stages):
            async with RecallUnit(self.services.db, ctx.vault.id) as own:
                return await self._run(ctx, stages, out, own)
        return await self._run(ctx, stages, out, unit)

    async def _run(self, ctx: RecallContext, stages: list[Stage], out: list[Candidate],
                   unit: RecallUnit | None) -> list[Candidate]:
        for stage in stages:
            if stage.needs_db:
                assert unit is not None
                # A stage whose statements scope themselves (FastSearch) is handed the unit, and the transaction
                # only if one is open; any other one the unit's transaction, opened by its first statement.
                conn = unit.current if getattr(stage, "scopes_itself", False) else unit.lazy
                out = await self._one(replace(ctx, conn=conn, unit=unit), stage, out)
                continue
            if unit is not None and getattr(stage, "calls_models", False):
                await unit.close()  # no transaction waits on a model
            out = await self._one(ctx, stage, out)
        return out

    @staticmethod
    async def _one(ctx: RecallContext, stage: Stage, cands: list[Candidate]) -> list[Candidate]:
        with ctx.clock.stage(stage.name):
            return await stage(replace(ctx, stage=stage.name), cands)
