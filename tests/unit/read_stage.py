"""Run one read stage the way the pipeline does: a RecallContext with the stage's name, no database."""

from __future__ import annotations

from typing import Any

from app.read.config import IntentProfile, RerankBlend, RetrievalMode, ScoringConfig
from app.read.context import RecallContext


async def run_stage(stage: Any, cands: list, query: str = "q", events: list | None = None, *,
                    blend: RerankBlend | None = None, services: Any = None) -> list:
    """``services``: what the stage counts into (``services.read_counters``), None: nowhere."""
    profile = IntentProfile("unknown", ScoringConfig(), blend or RerankBlend(), RetrievalMode.LOCAL, "fast")
    ctx = RecallContext(query, profile=profile, events=[] if events is None else events, stage=stage.name,
                        services=services)
    return await stage(ctx, cands)
