"""RerankStage: the attention gate, the circuit breaker (3 failures -> open 600 s) and blending, with fake
rerankers (only the model is faked)."""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace

from app.errors import ModelError
from app.models.base import Reranker
from app.models.breaker import CircuitBreaker
from app.read.config import GateConfig, RerankBlend
from app.read.rerank import RerankStage
from app.read.search import Candidate
from app.read.stats import ReadCounters
from tests.unit.read_stage import run_stage


class ReverseReranker(Reranker):
    name = "reverse"

    def __init__(self) -> None:
        self.calls = 0

    async def score(self, query: str, texts: Sequence[str]) -> list[float]:
        self.calls += 1
        return [float(i) for i in range(len(texts))]  # prefers the last


class BrokenReranker(Reranker):
    name = "broken"

    def __init__(self) -> None:
        self.calls = 0

    async def score(self, query: str, texts: Sequence[str]) -> list[float]:
        self.calls += 1
        raise ModelError("reranker server down")


def cands(*scores: float) -> list[Candidate]:
    return [Candidate(id=i, score=s, base=s, cosine=0.5, text=f"t{i}", content=f"t{i}") for i, s in enumerate(scores)]


async def test_blend_reorders_by_reranker() -> None:
    rr = ReverseReranker()
    stage = RerankStage(rr, gate=GateConfig(), breaker=CircuitBreaker("t-blend"))
    events: list[dict] = []
    counted = SimpleNamespace(read_counters=ReadCounters())  # the services' counters the stage counts into
    out = await run_stage(stage, cands(0.9, 0.8, 0.7, 0.6), events=events, blend=RerankBlend(0.3, 0.7),
                          services=counted)
    assert [c.id for c in out] == [3, 2, 1, 0] and rr.calls == 1
    assert events[-1]["event"] == "blend" and counted.read_counters.get(None, "rerank.blend") == 1
    assert all(c.rerank is not None for c in out)


async def test_gate_skips_without_calling() -> None:
    rr = ReverseReranker()
    stage = RerankStage(rr, breaker=CircuitBreaker("t-gate"))
    events: list[dict] = []
    out = await run_stage(stage, cands(0.9, 0.2), events=events, blend=RerankBlend())
    assert [c.id for c in out] == [0, 1] and rr.calls == 0 and events[-1]["reason"] == "too_few"
    await run_stage(stage, cands(0.9, 0.3, 0.2), events=events, blend=RerankBlend())
    assert events[-1]["reason"] == "dominant" and rr.calls == 0


async def test_breaker_opens_after_three_failures_for_600_s() -> None:
    now = [1000.0]
    breaker = CircuitBreaker("t-breaker", failures=3, open_s=600, clock=lambda: now[0])
    broken = BrokenReranker()
    stage = RerankStage(broken, breaker=breaker)
    events: list[dict] = []
    counted = SimpleNamespace(read_counters=ReadCounters())
    for _ in range(3):
        out = await run_stage(stage, cands(0.9, 0.8, 0.7), events=events, blend=RerankBlend(), services=counted)
        assert [c.id for c in out] == [0, 1, 2]  # degrades to the scoring order
    assert breaker.state == "open" and counted.read_counters.get(None, "rerank.trip") == 1
    assert counted.read_counters.get(None, "rerank.failure") == 3
    assert any(e["event"] == "breaker_trip" for e in events)
    await run_stage(stage, cands(0.9, 0.8, 0.7), events=events, blend=RerankBlend())
    assert broken.calls == 3 and events[-1]["event"] == "breaker_open"  # skipped without a call
    now[0] += 601
    await run_stage(stage, cands(0.9, 0.8, 0.7), events=events, blend=RerankBlend())
    assert broken.calls == 4  # half-open: one probe


async def test_no_reranker_is_a_reported_skip() -> None:
    events: list[dict] = []
    out = await run_stage(RerankStage(None), cands(0.9, 0.8, 0.7), events=events, blend=RerankBlend())
    assert [c.id for c in out] == [0, 1, 2] and events == [{"stage": "rerank", "event": "skip",
                                                             "reason": "no_reranker"}]
