"""The read track's recipes: every entry names a stage that follows the protocol; the runner times each stage
under its name, stamps its events with it, and skips an inactive one."""

from __future__ import annotations

import inspect
from typing import ClassVar

import pytest

from app.read.config import FAST_RECIPE, SLOW_RECIPE, ReadConfig
from app.read.context import ReadStage, RecallContext
from app.read.pipeline import Pipeline, load_stage
from app.read.search import Candidate


@pytest.mark.parametrize("ref", sorted(set(FAST_RECIPE) | set(SLOW_RECIPE)))
def test_every_recipe_entry_is_a_stage(ref: str) -> None:
    cls = load_stage(ref)
    assert isinstance(cls.name, str) and cls.name
    assert isinstance(cls.needs_db, bool)
    assert inspect.iscoroutinefunction(cls.__call__)
    assert list(inspect.signature(cls.__call__).parameters)[:2] == ["self", "ctx"]
    assert callable(cls.build) and callable(cls.active)


def test_slow_is_fast_plus_extras_in_the_same_order() -> None:
    assert [r for r in SLOW_RECIPE if r in FAST_RECIPE] == list(FAST_RECIPE)
    assert {load_stage(r).name for r in set(SLOW_RECIPE) - set(FAST_RECIPE)} == {
        "multi_query", "gap", "cascade", "crag"}
    assert dict(ReadConfig().recipes) == {"fast": FAST_RECIPE, "slow": SLOW_RECIPE}


def test_a_wrong_entry_fails_when_the_track_is_built() -> None:
    with pytest.raises(ModuleNotFoundError):
        load_stage("app.read.no_such_stage:Nothing")
    with pytest.raises(AttributeError):
        load_stage("app.read.speaker:NoSuchStage")
    with pytest.raises(ValueError):
        load_stage("app.read.speaker")


class Double(ReadStage):
    name: ClassVar[str] = "double"

    async def __call__(self, ctx: RecallContext, cands: list[Candidate]) -> list[Candidate]:
        ctx.emit(n=len(cands))
        return [c.with_score(c.score * 2) for c in cands]


class Off(Double):
    name: ClassVar[str] = "off"

    def active(self, ctx: RecallContext) -> bool:
        return False


async def test_the_runner_times_and_names_each_stage_and_skips_an_inactive_one() -> None:
    config = ReadConfig(recipes=(("fast", (f"{__name__}:Double", f"{__name__}:Off", f"{__name__}:Double")),))
    pipeline = Pipeline(services=None, config=config)
    ctx = RecallContext("q", thinking="fast")
    out = await pipeline.run(ctx, [Candidate(id=1, score=1.0, base=1.0, cosine=0.5, text="t", content="t")])
    assert [c.score for c in out] == [4.0]
    assert list(ctx.clock.ms) == ["double"]  # two runs add up under one name; the inactive one is not timed
    assert ctx.events == [{"stage": "double", "n": 1}, {"stage": "double", "n": 1}]
