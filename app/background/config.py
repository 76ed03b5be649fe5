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
    # Contradiction scan (dream_conflict_scan_v3): the facts new since the last dream, at most 2000 a dream (the
    # rest are counted as unscanned), each against its 3 nearest valid facts (the vault's own HNSW index past
    # 5000 blocks, one exact pass below), at most 200 new pairs a dream. A pair at cosine >= 0.85 with different
    # text is a 'semantic' candidate; one at cosine >= 0.70 whose two statements carry different values (numbers,
    # counts, weekdays, months) is a 'value' candidate: the shape of a knowledge update ("yoga twice a week" /
    # "three times a week"), which paraphrases less closely than a restatement does.
    # Both scans read memories and atomic units, not raw turn chunks: a turn is what was said (it stays true as a
    # record of the conversation); the facts drawn from it are what a newer fact supersedes. On one LongMemEval
    # haystack, scanning the chunks' triples too found 200 pairs and superseded 107 turns.
    scan_min_cosine: float = 0.85
    scan_value_min_cosine: float = 0.70
    scan_neighbours: int = 3
    scan_limit: int = 200
    scan_max_new: int = 2000
    scan_exact_below: int = 5000
    scan_kinds: tuple[str, ...] = ("memory", "unit")
    # Temporal conflict resolution: a verdict below 0.7 is escalated to the stronger model (dream_judge_llm), or
    # queued for review when there is none. A SUPERSEDE that agrees with the structural slot scan (same subject,
    # single-valued predicate, another object), or a 'value' pair whose judge found a changed value, is two
    # independent detectors agreeing: confidence 1 - (1 - c)(1 - 0.5).
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
    # Normalization (consolidate): at most 5000 triples renamed and 5000 new entities looked at a dream.
    normalize_limit: int = 5000
    # Prune: at most 1000 orphan entities a dream.
    prune_orphans_limit: int = 1000


@dataclass(frozen=True, slots=True)
class EdgeConfig:
    """Multi-signal edges (seed 004): the five weights of the composite and the threshold an edge must reach."""

    w_co_occurrence: float = 0.25
    w_session_jaccard: float = 0.20
    w_adamic_adar: float = 0.20
    w_type_affinity: float = 0.15
    w_semantic: float = 0.20
    # 0.45: a pair that never shares a memory stays below it even with every other signal middling (on a planted
    # graph two-hop pairs scored 0.29-0.40: session Jaccard 0.5, Adamic-Adar 0.29, type affinity 1, name cosine
    # 0.2-0.5); a pair linked in even one memory of a shared session passes (0.55-0.75).
    threshold: float = 0.45
    default_affinity: float = 0.4
    # Common neighbours of a higher degree (the user, the main speakers) are skipped in Adamic-Adar: their 1/ln(d)
    # is small, and their pairs are quadratic in number.
    max_hub_degree: int = 200


@dataclass(frozen=True, slots=True)
class CommunityConfig:
    """Leiden (leidenalg, RBConfiguration) at several resolutions; the default one feeds GLOBAL recall."""

    resolutions: tuple[float, ...] = (0.5, 1.0, 2.0)
    default_resolution: float = 1.0
    min_size: int = 2
    summary_min_size: int = 3
    summary_max_texts: int = 30
    max_summaries: int = 50
    seed: int = 42


@dataclass(frozen=True, slots=True)
class PersonalConfig:
    """Attitudes fade with a 90-day half-life unless confirmed (lambda = ln 2 / 90 = 0.0077 a day: a preference
    stated once and never again is at half its confidence after three months) and are suppressed below 0.2.
    Skills lose half their experience every 60 days unused; L2 from 2.5 (three recent uses), L3 from 8 (eight or
    nine uses in a few weeks)."""

    attitude_lambda: float = 0.0077
    attitude_min_confidence: float = 0.2
    skill_half_life_days: float = 60.0
    skill_l2: float = 2.5
    skill_l3: float = 8.0
    # Who "I" is in the graph: the extractor names the speaker of a user turn 'user'.
    self_keys: tuple[str, ...] = ("user", "i", "me")


@dataclass(frozen=True, slots=True)
class TierConfig:
    """Hot under 7 days idle (since recorded or last recalled), warm under 30, cold under 180, frozen beyond; a
    memory recalled in the last 30 days or upvoted is at least warm, one of confidence >= 0.9 at least cold. A cold
    memory shows a digest of at most 400 characters, a frozen one a headline of at most 120."""

    hot_days: float = 7.0
    warm_days: float = 30.0
    cold_days: float = 180.0
    keep_confidence: float = 0.9
    headline_chars: int = 120
    batch: int = 500
    # Closed loop: two downvotes more than upvotes and no recall in 30 days -> retracted.
    prune_min_down: int = 2
    prune_idle_days: float = 30.0
