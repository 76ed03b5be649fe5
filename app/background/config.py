"""The background track's tunables, as data (STYLE.md 5): one frozen object per area, each default with its reason.

SQL functions take these as parameters; nothing here is read from the environment (settings do that).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class DreamConfig:
    # The dual gate (seed 004): more than 24 h since the last dream AND at least 5 sessions since then.
    gate_min_hours: float = 24.0
    gate_min_sessions: int = 5
    # Contradiction scan: memories at cosine >= 0.85 with different text (its 3 nearest each), at most 200 new
    # pairs a dream. The semantic scan reads memories and atomic units, not raw turn chunks (a turn is what was
    # said; the facts drawn from it are what can be superseded); the slot scan reads every triple's evidence.
    scan_min_cosine: float = 0.85
    scan_neighbours: int = 3
    scan_limit: int = 200
    scan_kinds: tuple[str, ...] = ("memory", "unit")
    # Temporal conflict resolution: a verdict below 0.7 is escalated to the stronger model (dream_judge_llm), or
    # queued for review when there is none. A SUPERSEDE that agrees with the structural slot scan (same subject,
    # single-valued predicate, another object) is two independent detectors agreeing:
    # confidence 1 - (1 - c)(1 - 0.5).
    escalate_below: float = 0.7
    slot_corroboration: float = 0.5
    # The review queue's auto-approve rule (seed 004): confidence > 0.8 AND impact < 0.5; impact is
    # 1 - exp(-signal / 8), signal = accesses + 3 x upvotes + triples it evidences + 2 for a decision, constraint or
    # preference. An item is due for review within 7 days; past that it comes back, never dropped.
    review_min_confidence: float = 0.8
    review_max_impact: float = 0.5
    impact_scale: float = 8.0
    review_ttl_days: int = 7
    review_rate: float = 0.2
    # Reflect: the newest 60 memories and units since the last dream are the snapshot the reflect task reads.
    reflect_max_memories: int = 60
    # Prune: at most 1000 orphan entities a dream.
    prune_orphans_limit: int = 1000
