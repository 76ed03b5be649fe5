"""Temporal conflict resolution (TCR, seed 004): the dream's judge of two memories that may contradict.

The judge (the ``resolve_conflict`` task: the configured LLM, its heuristic twin offline) sees both statements with
their valid and invalid time and the session each was said in, and answers MERGE / SUPERSEDE / COEXIST with a
confidence. A verdict below ``escalate_below`` goes to the stronger model (``dream_judge_llm``); without one, or
still unsure, it goes to the review queue. So does a sure verdict whose change would disturb too much (impact at or
above the vault's threshold). Everything else is applied by one SQL function, ``apply_conflict_verdict_v1``
(the model decides, code applies).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from app.background.config import DreamConfig
from app.db.queries import Q
from app.models.tasks import RESOLVE_CONFLICT, ResolveConflictInput

if TYPE_CHECKING:
    import psycopg

    from app.models.base import LLM

Route = Literal["applied", "queued"]


@dataclass(frozen=True, slots=True)
class Judgement:
    action: Literal["MERGE", "SUPERSEDE", "COEXIST"]
    confidence: float
    reason: str
    judge: str
    escalated: bool


def _iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


class TemporalConflictResolution:
    def __init__(self, llm: LLM, strong: LLM | None = None, config: DreamConfig | None = None) -> None:
        self.llm = llm
        self.strong = strong
        self.config = config or DreamConfig()

    def payload(self, row: dict[str, Any]) -> ResolveConflictInput:
        return ResolveConflictInput(
            existing=row["old_content"], new=row["new_content"], similarity=float(row["cosine"]),
            existing_valid_at=_iso(row["old_valid_at"]), existing_invalid_at=_iso(row["old_invalid_at"]),
            existing_session=row["old_session"], new_valid_at=_iso(row["new_valid_at"]),
            new_session=row["new_session"])

    async def judge(self, row: dict[str, Any]) -> Judgement:
        cfg = self.config
        if row["source"] == "duplicate":
            return Judgement("MERGE", 1.0, "the same text twice", "rule:identical", False)
        payload = self.payload(row)
        out = await self.llm.run(RESOLVE_CONFLICT, payload)
        judge, escalated = f"{RESOLVE_CONFLICT.id}:{self.llm.name}", False
        if out.confidence < cfg.escalate_below and self.strong is not None:
            out = await self.strong.run(RESOLVE_CONFLICT, payload)
            judge, escalated = f"{RESOLVE_CONFLICT.id}:{self.strong.name}", True
        confidence = float(out.confidence)
        reason = out.reason
        scan = _scan_evidence(row["source"], row["detail"] or {})
        if scan is not None and out.action == "SUPERSEDE":  # the scan that found the pair corroborates the verdict
            confidence = 1 - (1 - confidence) * (1 - cfg.slot_corroboration)
            reason = f"{reason}; {scan}"
        return Judgement(out.action, round(confidence, 4), reason, judge, escalated)

    def impact(self, row: dict[str, Any]) -> float:
        return 1.0 - math.exp(-float(row["impact_signal"]) / self.config.impact_scale)

    def route(self, j: Judgement, impact: float, min_confidence: float, max_impact: float,
              source: str) -> Route:
        """Where a verdict goes: applied now, or queued for a person."""
        if j.action == "COEXIST":
            # Keeping both changes nothing; an unsure "no conflict" on a structural conflict deserves a look.
            return "queued" if source == "slot" and j.confidence < self.config.escalate_below else "applied"
        if j.confidence > min_confidence and impact < max_impact:
            return "applied"
        return "queued"

    async def resolve_pending(self, conn: psycopg.AsyncConnection, *, limit: int) -> dict[str, Any]:
        """Judge every candidate pair of the vault in scope on ``conn`` and apply or queue each verdict."""
        cfg = self.config
        cur = await conn.execute(Q.review_thresholds, ("conflict", cfg.review_min_confidence, cfg.review_max_impact))
        th = await cur.fetchone()
        min_conf, max_imp = float(th["min_confidence"]), float(th["max_impact"])
        cur = await conn.execute(Q.dream_conflicts_to_judge, (limit,))
        rows = await cur.fetchall()
        counts: dict[str, Any] = {"judged": 0, "applied": {"MERGE": 0, "SUPERSEDE": 0, "COEXIST": 0}, "queued": 0,
                                  "stale": 0, "escalated": 0}
        for row in rows:
            j = await self.judge(row)
            impact = self.impact(row)
            route = self.route(j, impact, min_conf, max_imp, row["source"])
            cur = await conn.execute(Q.apply_conflict_verdict,
                                     (row["conflict_id"], j.action, j.confidence, j.reason, j.judge, route))
            status = (await cur.fetchone())["s"]
            counts["judged"] += 1
            counts["escalated"] += int(j.escalated)
            if status == "queued":
                proposal = {"action": j.action, "old_block_id": row["old_id"], "new_block_id": row["new_id"],
                            "old": row["old_content"][:500], "new": row["new_content"][:500],
                            "reason": j.reason, "judge": j.judge, "source": row["source"]}
                why = "low confidence" if j.confidence <= min_conf or j.action == "COEXIST" else "high impact"
                await conn.execute(
                    Q.review_enqueue,
                    ("conflict", row["conflict_id"], json.dumps(proposal), j.confidence, impact,
                     f"{j.action} at confidence {j.confidence:.2f}, impact {impact:.2f}: {why}",
                     cfg.review_ttl_days))
                counts["queued"] += 1
            elif status == "stale":
                counts["stale"] += 1
            else:
                counts["applied"][j.action] += 1
        return counts


def _scan_evidence(source: str, d: dict[str, Any]) -> str | None:
    """What a slot or value scan saw in a pair (a single-valued triple's object changed, or a value changed at
    some cosine); None for the other sources, which say nothing for or against an update."""
    if source == "slot":
        return f"slot scan: {d.get('subject')} {d.get('predicate')} {d.get('old_object')!r} -> {d.get('new_object')!r}"
    if source == "value":
        return f"value scan: {d.get('old_values')} -> {d.get('new_values')} at cosine {d.get('cosine')}"
    return None
