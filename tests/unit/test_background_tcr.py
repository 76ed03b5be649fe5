"""Temporal conflict resolution's routing: escalation to a stronger model, the review queue without one."""

from __future__ import annotations

from datetime import UTC, datetime

from app.background.config import DreamConfig
from app.background.tcr import TemporalConflictResolution
from app.models.base import LLM, TaskResult
from app.models.llms.structured import HeuristicLLM


class SureJudge(LLM):
    """A stronger model, faked: always sure the newer statement replaces the older."""

    name = "strong"

    def __init__(self) -> None:
        self.calls = 0

    async def run_traced(self, task, payload):
        self.calls += 1
        assert "valid_at" in task.render(payload) and "session s2" in task.render(payload)
        return TaskResult(output=task.output_model(action="SUPERSEDE", confidence=0.95, reason="sure"),
                          source="model")


ROW = {"source": "semantic", "detail": {}, "old_content": "We meet on the terrace.", "new_content":
       "The team lunch is at noon.", "old_valid_at": datetime(2026, 1, 1, tzinfo=UTC), "old_invalid_at": None,
       "old_session": "s1", "new_valid_at": datetime(2026, 2, 1, tzinfo=UTC), "new_session": "s2", "cosine": 0.86,
       "impact_signal": 1}


async def test_unsure_verdicts_escalate_or_queue() -> None:
    cfg = DreamConfig()
    alone = TemporalConflictResolution(HeuristicLLM(), None, cfg)
    j = await alone.judge(ROW)
    assert j.confidence < cfg.escalate_below and not j.escalated
    strong = SureJudge()
    tcr = TemporalConflictResolution(HeuristicLLM(), strong, cfg)
    j2 = await tcr.judge(ROW)
    assert j2.escalated and j2.action == "SUPERSEDE" and j2.judge.endswith(":strong") and strong.calls == 1
    impact = tcr.impact(ROW)
    assert 0 < impact < 0.2
    assert tcr.route(j2, impact, 0.8, 0.5, "semantic") == "applied"
    assert tcr.route(j2, 0.7, 0.8, 0.5, "semantic") == "queued"  # too much depends on it
    # a sure slot conflict judged SUPERSEDE: both detectors agree
    slot = {**ROW, "source": "slot", "old_content": "I live in Boston.", "new_content": "I live in Seattle.",
            "detail": {"subject": "I", "predicate": "lives_in", "old_object": "Boston", "new_object": "Seattle"}}
    j3 = await alone.judge(slot)
    assert j3.action == "SUPERSEDE" and j3.confidence == 0.9 and "lives_in" in j3.reason
    # an unsure COEXIST on a structural conflict is queued; on a semantic neighbour it is kept
    unsure = type(j)("COEXIST", 0.5, "?", "x", False)
    assert alone.route(unsure, 0.1, 0.8, 0.5, "slot") == "queued"
    assert alone.route(unsure, 0.1, 0.8, 0.5, "semantic") == "applied"


def test_the_dream_takes_its_judge_from_the_services_built_once() -> None:
    """The stronger judge is a model of the service (Services.judge_llm), built once like the others, not once
    per dream by the DreamLoop."""
    from app.background.dream import DreamLoop
    from app.services import Services
    from app.settings import Settings

    strong = SureJudge()
    services = Services.__new__(Services)
    services.settings, services.llm, services.db = Settings(), HeuristicLLM(), None
    services.__dict__["judge_llm"] = strong  # what the cached property holds once built
    assert DreamLoop(services).tcr.strong is strong
    assert DreamLoop(services).tcr.strong is DreamLoop(services).tcr.strong
