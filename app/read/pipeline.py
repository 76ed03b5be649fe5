"""The runner of the read track's recipes (``ReadConfig.recipes``, :mod:`app.read.config`).

Each recipe entry is a ``module:Class`` following the :class:`~app.read.context.Stage` protocol; every stage is
built once, when the read track is built. The runner times each stage under its name, tells it its name (so its
events carry it), skips an inactive one, and opens one transaction per run of consecutive ``needs_db`` stages.
"""

from __future__ import annotations

import importlib
from dataclasses import replace
from typing import TYPE_CHECKING

from app.read.context import RecallContext, Stage

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

    async def run(self, ctx: RecallContext, cands: list[Candidate] | None = None) -> list[Candidate]:
        stages = [s for s in self.recipes[ctx.thinking] if s.active(ctx)]
        out: list[Candidate] = list(cands or [])
        i = 0
        while i < len(stages):
            if not stages[i].needs_db:
                out = await self._one(ctx, stages[i], out)
                i += 1
                continue
            j = i
            while j < len(stages) and stages[j].needs_db:
                j += 1
            async with self.services.db.transaction(ctx.vault.id) as conn:
                with_conn = replace(ctx, conn=conn)
                for stage in stages[i:j]:
                    out = await self._one(with_conn, stage, out)
            i = j
        return out

    @staticmethod
    async def _one(ctx: RecallContext, stage: Stage, cands: list[Candidate]) -> list[Candidate]:
        with ctx.clock.stage(stage.name):
            return await stage(replace(ctx, stage=stage.name), cands)
