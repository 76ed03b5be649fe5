"""The read track's configuration as data: per-intent ScoringConfig, LayerPlan, RetrievalMode, thinking mode.

Seed 000 gives the numbers (stage formulas, RRF k = 60, rerank blends, gate rules); they are the defaults here and
reach SQL as parameters (``p_cfg`` of ``memvault.score_candidates_v2`` / ``fast_search_v1``), never as literals
scattered through the code. Intent-dependent weights (seed 000, section III): entity_lookup pulls SemanticBoost to
0.5, exploratory pulls up RecencyBoost, factual makes TrustBoost heavier.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from enum import Enum
from typing import Any, Literal

from app.db.ann_index import MIN_BLOCKS

Intent = Literal["entity_lookup", "factual", "conceptual", "exploratory", "cross_domain", "unknown"]
INTENTS: tuple[Intent, ...] = ("entity_lookup", "factual", "conceptual", "exploratory", "cross_domain", "unknown")
Format = Literal["text", "json", "cards"]
Thinking = Literal["fast", "slow"]


class RetrievalMode(str, Enum):
    """Cascade recall's mode (LightRAG naming): LOCAL walks the graph from entities, GLOBAL reads community
    summaries, HYBRID does both."""

    LOCAL = "LOCAL"
    GLOBAL = "GLOBAL"
    HYBRID = "HYBRID"


@dataclass(frozen=True, slots=True)
class LayerPlan:
    """Which layers a recall reads. Blocks (L0 memories) always; the rest only in slow mode."""

    blocks: bool = True
    triples: bool = False  # L0 triples + PPR walk (LOCAL)
    communities: bool = False  # L1 communities / L2 summaries (GLOBAL)

    @classmethod
    def for_mode(cls, mode: RetrievalMode, thinking: Thinking) -> LayerPlan:
        if thinking == "fast":
            return cls()
        return cls(triples=mode in (RetrievalMode.LOCAL, RetrievalMode.HYBRID),
                   communities=mode in (RetrievalMode.GLOBAL, RetrievalMode.HYBRID))


@dataclass(frozen=True, slots=True)
class SearchConfig:
    """Fast search (``memvault.fast_search_v1``): rail sizes, RRF, the sparse rail's rare-term budget."""

    dense_n: int = 200  # upper bounds; each call reads 2 x the candidates it needs, at least min_rail_n
    sparse_n: int = 200
    min_rail_n: int = 50
    rrf_k: float = 60.0
    # Weighted RRF. With the default embedder (USE, one encoding for questions and statements) the dense rail
    # is the weaker one on factual questions: LoCoMo dev coverage@10 0.606 -> 0.664 at dense_w 0.5, the
    # LongMemEval per-type-2 subset unchanged (same scores at 1.0 and 0.5).
    dense_w: float = 0.5
    sparse_w: float = 1.0
    # The second dense rail (settings.rail2_embedder, app/read/rail2.py; e5-onnx by default) at this weight, read
    # rail2_n deep (0: as deep as the dense rail), on the paths rail2_fast / rail2_slow say: the slow path's search
    # (its question and each multi-query variant) only. A path without it pays no second query embedding.
    # docs/read-track-log.md round 13, LoCoMo dev leave-one-conversation-out @10 per fold (today's track without
    # the rail 0.803 / 0.818 / 0.808): slow path only 0.818 / 0.824 / 0.816 (every fold up, multi-hop 0.488 ->
    # 0.501); both paths 0.827 / 0.809 / 0.820 (the fast path's questions: multi-hop 0.385 -> 0.324 on conv-30);
    # fast only 0.812 / 0.803 / 0.812. Weight 0.5 of 0.25 / 0.5 / 1 and depth 0 of 0 / 30 / 120 chosen on folds.
    rail2_w: float = 0.5
    rail2_fast: bool = False
    rail2_slow: bool = True
    rail2_variants: bool = True  # ... and the slow path's multi-query variants (each one more e5 query embedding)
    # ... and the fast path's search of a question that gathers (asks_many, app/read/spread.py), whatever
    # rail2_fast says: one e5 query embedding for those questions only. Round 14 of docs/read-track-log.md.
    rail2_gather: bool = False
    rail2_n: int = 0
    # Vaults with at most this many blocks are searched exactly; larger ones through their own HNSW index (built
    # from the same size on: app/db/ann_index.py), exactly until it exists.
    exact_below: int = MIN_BLOCKS
    # hnsw.ef_search of a vault's index search up to 50k rows in it; past that it grows as (rows / 50k)^0.55
    # (memvault.ann_ef_search_v1: ANN recall@10 against exact, calibrated on the first 100 dev questions, at 100k
    # 0.977 at 100, 0.990 at 146, it grows to 148; at 1M 0.909 at 100, 0.988 at 500, it grows to 524; held out,
    # 0.9705 at 100k and 0.991 at 1M: docs/ann-params.md).
    ef_search: int = 100
    # The sparse rail's terms (memvault.sparse_plan_v3): rare ones alone within sparse_single_budget estimated
    # rows, common ones in pairs (the rarest of them within sparse_pair_budget estimated rows); common ones alone
    # only to fill, within sparse_row_budget. With 8 terms and a 0.1 max frequency the pair budget is never
    # reached in a vault of at most 100k blocks (7 pair terms x 10% of its blocks); at a million it keeps a
    # question's first pass from ORing up to 21 pairs of long posting lists (docs/benchmarks.md "A million
    # memories": the sparse rail's p95 58 -> 36 ms, its top 100 0.999 the same as without the budget).
    sparse_max_terms: int = 8
    sparse_single_budget: float = 1000.0
    sparse_row_budget: float = 4000.0
    sparse_max_freq: float = 0.1
    sparse_pair_budget: float = 70000.0
    # BM25 scoring of the sparse rail's matches (memvault._sparse_rail_v2: term-frequency saturation sparse_k1,
    # length normalization sparse_b against the vault's mean block length, BM25's idf; Chinese stop words out of
    # the query) instead of the sum of the matched terms' idf (_sparse_rail_v1). Same terms, same scan, ~1.5 ms
    # more. Off: LoCoMo leave-one-conversation-out @10 0.803 / 0.818 / 0.808 -> 0.798 / 0.814 / 0.804 (false
    # chosen in every fold), LongMemEval NDCG@10 cross-validated 0.964 against 0.965 (read-track-log.md round 10).
    sparse_bm25: bool = False
    # How the sparse rail reads a vault (idf-sum scoring): None lets memvault.sparse_scan_v1 choose the vault's rows
    # (a vault of at most 5,000 blocks and under 2.5% of the table) or the GIN index every vault shares; True / False
    # force one. Both find the same matches in the same order; only the cost differs.
    sparse_scan: bool | None = None
    sparse_k1: float = 1.2
    sparse_b: float = 0.75
    # A second dense query from the question's focus (its subject's words, app/read/focus.py), fused as a rail of
    # its own at this weight; 0: off (no second embedding). On LoCoMo dev it widens the fused candidate pool
    # (0.928 -> 0.937 of the evidence) but @10 cross-validates at 0.808 as without it (0.25: 0.823 / 0.801 /
    # 0.816 per fold against 0.803 / 0.818 / 0.808; read-track-log.md round 10).
    focus_dense_w: float = 0.0
    # Pseudo-relevance feedback on the sparse rail (fast_search_v1): the rare lexemes that two or more of the rail's
    # sparse_prf_docs best blocks share join the query's terms (at sparse_prf_term_w x their idf) in a second
    # pass, fused as a rail of its own at this weight; 0: off (no second pass).
    sparse_prf_w: float = 0.0
    sparse_prf_docs: int = 10
    sparse_prf_terms: int = 5
    sparse_prf_term_w: float = 0.5

    def rail2_on(self, thinking: str, *, variant: bool = False, gathers: bool = False) -> bool:
        """Whether a search of this thinking mode (of the question, or of a multi-query ``variant`` of it) uses
        the second dense rail, when one is configured; ``gathers``: the question asks for many."""
        if self.rail2_w <= 0 or (variant and not self.rail2_variants):
            return False
        return self.rail2_slow if thinking == "slow" else self.rail2_fast or (gathers and self.rail2_gather)

    def params(self, exact: bool | None) -> dict[str, Any]:
        out: dict[str, Any] = asdict(self)
        for python_only in ("min_rail_n", "rail2_fast", "rail2_slow", "rail2_variants", "rail2_gather"):
            out.pop(python_only)
        if exact is not None:
            out["exact"] = exact
        return out


# SemanticBoost's weights are the seed's (0.3; entity_lookup 0.5, conceptual 0.4) times this. RRF keeps only
# the rails' ranks, so stage 8 is the one stage where the size of the cosine counts. Measured on the dev sets,
# the seed's weights x1 / x1.5 / x2 / x3: LongMemEval NDCG@10 0.902 / 0.901 / 0.910 / 0.908, LoCoMo evidence
# @10 0.724 / 0.730 / 0.737 / 0.741.
SEMANTIC_SCALE = 2.0


@dataclass(frozen=True, slots=True)
class ScoringConfig:
    """The 11 stages' coefficients (seed 000, section III), in pipeline order."""

    recency_w: float = 0.15  # 1. RecencyBoost x (1 + w e^(-age/tau))
    recency_tau_days: float = 14.0
    window_start: str | None = None  # the question's timeframe (QueryTimeframe, ISO), set per query: stage 1
    window_end: str | None = None  # then measures age from it, with window_w / window_tau_days
    window_w: float = 0.5
    window_tau_days: float = 7.0
    # A timeframe no candidate comes within this many days of (by when it was said or a date it names) is not
    # read against these memories: stage 1 falls back to plain recency (QueryTimeframe, 070-scoring.sql).
    window_reach_days: float = 14.0
    # A question about when something happened and naming no time ("When did Jon lose his job?"): stages 1 and 6
    # with these weights instead (timeframe.asks_when); the defaults keep recency and decay as for any question.
    when_recency_w: float = 0.15
    when_decay_w: float = 0.3
    # ... and a memory that names a date or time ("yesterday", "last Friday", "in 2019") x (1 + dated_w): where
    # an event's time is said. dated_w is set from when_dated_w for those questions only. Chosen with the
    # validation protocol (docs/read-track-log.md, round 6): LoCoMo dev @10 cross-validated 0.788 -> 0.796
    # (leave-one-conversation-out; 0.5 chosen on the other conversations in every fold of the 0 / 0.2 / 0.5 grid;
    # in-sample 0.799 at 1.0), temporal per conversation 0.919 / 1.000 / 0.889 -> 0.973 / 1.000 / 0.926.
    dated_w: float = 0.0
    when_dated_w: float = 0.5
    importance_base: float = 0.7  # 2. ImportanceWeight x (base + w conf)
    importance_w: float = 0.3
    trust_w: float = 0.3  # 3. TrustBoost x (1 - w (1 - trust))
    feedback_w: float = 0.15  # 4. FeedbackBoost x (1 + w tanh(net / scale))
    feedback_scale: float = 3.0
    length_w: float = 0.3  # 5. LengthNorm / (1 + w |log2(len / center)|)
    length_center: float = 500.0
    decay_w: float = 0.3  # 6. WeibullDecay x (1 - w (1 - S(age))), 4 tiers by confidence
    decay_shape: float = 1.5
    half_life_core: float = 180.0
    half_life_hot: float = 60.0
    half_life_warm: float = 30.0
    half_life_cold: float = 14.0
    conf_core: float = 0.9
    conf_hot: float = 0.7
    conf_warm: float = 0.4
    access_stretch_max: float = 10.0  # access_count stretches the half-life, up to 10x
    # 7. PPRBoost x (1 + w ppr): the seed's w is 0.3. Measured with the graphs the offline extractor builds
    # (kept dev vaults, graph and centrality built as the worker would), w 0 / 0.1 / 0.2 / 0.3: LongMemEval NDCG@10
    # 0.961 / 0.954 / 0.941 / 0.935, LoCoMo @10 0.788 / 0.794 / - / 0.801. A global centrality prior lifts the
    # topics a person returns to, which LoCoMo asks about and LongMemEval's single-session questions do not.
    ppr_w: float = 0.1
    semantic_w: float = 0.3 * SEMANTIC_SCALE  # 8. SemanticBoost x (1 + w cos)
    min_score: float = 0.10  # 9. MinScoreGate
    noise_tags: tuple[str, ...] = ("noise", "injection", "poisoning", "spam", "low_quality", "duplicate",
                                   "contradiction")  # 10. NoiseFilter: the seven quarantine tags
    dedup_cos: float = 0.85  # 11. PairwiseDedup x 0.5 when cosine > 0.85 with a better one
    # ... for a question that asks for many (asks_many: a retelling of one occasion in another session takes the
    # place of another occasion): dedup_cos is set from it. Round 8 (docs/read-track-log.md): 0.85 / 0.75 / 0.65
    # / 0.5 cross-validated 0.804 against 0.802 (0.75 chosen in every fold), but 0.85 / 0.8 / 0.75 / 0.7 0.8015:
    # a narrow peak at 0.75 (multi-hop @10 0.483 -> 0.494), not adopted; the same as dedup_cos, no change.
    gather_dedup_cos: float = 0.85
    dedup_factor: float = 0.5
    dedup_window: int = 50

    def params(self) -> dict[str, Any]:
        out = asdict(self)
        out["noise_tags"] = list(self.noise_tags)
        # recall (app/read/recall.py) sets recency_w, decay_w, dated_w and dedup_cos from these, per question
        for applied_in_python in ("when_recency_w", "when_decay_w", "when_dated_w", "gather_dedup_cos"):
            out.pop(applied_in_python)
        return out


@dataclass(frozen=True, slots=True)
class RerankBlend:
    """final = scoring_w x scoring + rerank_w x rerank (both min-max normalized over the reranked set)."""

    scoring_w: float = 0.3
    rerank_w: float = 0.7


@dataclass(frozen=True, slots=True)
class GateConfig:
    """AttentionGate: skip reranking when it cannot change much (seed 000, section IV)."""

    min_candidates: int = 3  # 2 or fewer: skip
    dominance_ratio: float = 0.5  # (s1 - s2) / s1 above this: the top dominates, skip
    cluster_spread: float = 0.05  # (max - min) / max below this: tightly clustered, skip
    top_n: int = 20  # how many candidates the reranker reads


@dataclass(frozen=True, slots=True)
class FunnelConfig:
    """Seed 003's selection funnel, a switchable recipe (off by default, as in the seed)."""

    enabled: bool = False
    candidates: int = 15
    similarity_floor: float = 0.40
    provenance: tuple[tuple[str, float], ...] = (("note", 1.0), ("user", 1.0), ("import", 0.8),
                                                ("resource", 0.8), ("assistant", 0.6), ("tool", 0.6),
                                                ("system", 0.6), ("web", 0.1))
    token_cap: int = 58_000
    variants: int = 4  # slow mode: multi-query decomposition into 3-4 variants


@dataclass(frozen=True, slots=True)
class ContinuityConfig:
    """SessionContinuity (app/read/continuity.py): the conversation around the top hits."""

    enabled: bool = True
    # The best candidates whose neighbourhood is read. Round 9 (docs/read-track-log.md), LoCoMo dev leave-one-
    # conversation-out on kept vaults, 5 / 10 / 12 / 15 / 20: 10 chosen on the other conversations in every fold,
    # cross-validated @10 0.802 -> 0.808 (per fold 0.809 / 0.803 / 0.795 -> 0.803 / 0.818 / 0.808); LongMemEval
    # any@5 and all@10 unchanged, NDCG@10 fold mean 0.968 -> 0.965.
    hits: int = 10
    window: int = 2  # turns before and after
    decay: float = 0.7  # a neighbour's base: its hit's base x decay ** distance


@dataclass(frozen=True, slots=True)
class SpeakerConfig:
    """SpeakerMatch (app/read/speaker.py): a named person's own turns first when the query names them, and the
    user's own turns when the query is about its asker."""

    enabled: bool = True
    weight: float = 2.0  # score x weight for a candidate whose speaker the query names
    first_person_weight: float = 1.3  # a question about its asker (I, me, my): the user's own turns


@dataclass(frozen=True, slots=True)
class CohesionConfig:
    """SessionCohesion (app/read/cohesion.py): a candidate whose session keeps coming back among the best ones
    gains a little over a lone match."""

    enabled: bool = True
    weight: float = 0.1  # score x (1 + weight x support), support = the session's other top scores / the best
    cap: float = 5.0  # support counted up to this (x1.5 at most)
    top: int = 20  # the best candidates whose sessions count


@dataclass(frozen=True, slots=True)
class SpreadConfig:
    """SessionSpread (app/read/spread.py): a question that asks for many things (asks_many) takes its candidates
    from more sessions: each next place goes to the best score x (1 - weight) ** (its session's places so far);
    with ``turn_weight``, x (1 - turn_weight) ** (places holding one of its turns) too."""

    enabled: bool = True
    weight: float = 0.35
    always: bool = False  # every question, not only those asks_many reads as asking for many
    candidates: int = 0  # at least this many candidates for such a question (0: as many as any other)
    # One place per turn, for every question (or, with turn_always false, for those that ask for many): each next
    # place also counts x (1 - turn_weight) ** (places already holding one of its turns), so an atomic unit and
    # its own turn's chunk do not take two of the best places for one thing said (on LoCoMo dev 133 of the 3,830
    # top-10 places were such a second card of a turn). Round 14 of docs/read-track-log.md, LoCoMo dev leave-one-
    # conversation-out @10 per fold: 0 (before) 0.818 / 0.824 / 0.816; 0.5 and 1 0.824 / 0.824 / 0.822, 0.5
    # chosen in every fold, cross-validated 0.819 -> 0.823 (0.25 and 1 the same to 0.001); for asks_many questions
    # only 0.822 / 0.824 / 0.815. LongMemEval NDCG@10 per fold unchanged (0.990 / 1.000 / 0.904).
    turn_weight: float = 0.5
    turn_always: bool = True


@dataclass(frozen=True, slots=True)
class HopConfig:
    """HopExpansion (app/read/hops.py): for a question that asks for many (asks_many), the memories near the
    ``seeds`` best first-hop candidates (by meaning, by the entities they name, by community) join the ranking.
    ``dense_n`` / ``entity_n`` 0 switch a source off; both are off (the stage inactive) since round 8 of
    docs/read-track-log.md: on the LoCoMo dev folds neither raised @10 on a fold it was not tuned on (dense_n
    10 at decay 1: multi-hop @10 0.483 -> 0.456; entity_n 20 on the offline extractor's graph: 0.490 -> 0.494, in
    one fold only)."""

    enabled: bool = True
    always: bool = False  # every question, not only those asks_many reads as asking for many
    seeds: int = 10
    dense_n: int = 0  # each seed's nearest memories by embedding
    entity_n: int = 0  # memories naming a (rare) entity the seeds' triples name, best first
    max_share: float = 0.1  # an entity named in more than this share of the evidence blocks is no link
    communities: bool = True  # ... and the other members of those entities' L1 communities, at half weight
    decay: float = 0.5  # a newcomer's base: its seed's base x decay x its similarity / entity weight


@dataclass(frozen=True, slots=True)
class ProvenanceConfig:
    """ProvenanceExpansion (app/read/provenance.py): a session summary among the ``hits`` best candidates, and
    the ``communities`` community summaries nearest the question (once the vault has dreamed), bring in the
    ``per_source`` memories they were made from nearest the question."""

    # Off: on the LoCoMo dev folds neither source helps @10 (docs/read-track-log.md round 11): session summaries'
    # sources are mostly on the rails already and take places from other sessions (per fold, dreamed vaults,
    # 0.810 / 0.805 / 0.815 -> 0.803 / 0.801 / 0.815 at 2 sources), and the dream's community summaries (6 a
    # vault, over 0-15% of the turns with the offline extractor's graph) move nothing at weight 1.
    enabled: bool = False
    hits: int = 10
    per_source: int = 2
    decay: float = 0.8  # a session summary's source: the summary's base x decay
    summary_w: float = 1.0  # the summary itself, once its sources are in: score x summary_w
    community_w: float = 0.0  # a community summary's source: the best base x community_w x the summary's cosine
    communities: int = 3
    min_cosine: float = 0.3


@dataclass(frozen=True, slots=True)
class CurrentConfig:
    """CurrentFirst (app/read/current.py): for a question about how things stand now, a later restatement of a
    value (another session) is placed just above the earlier one."""

    enabled: bool = True
    window: int = 20  # candidates that may move, and past which nothing moves
    min_shared: float = 0.5  # of the question's subject terms either statement names, the share both name


@dataclass(frozen=True, slots=True)
class IntentProfile:
    """Everything an intent decides downstream."""

    intent: Intent
    scoring: ScoringConfig
    blend: RerankBlend
    mode: RetrievalMode
    thinking: Thinking


_BASE = ScoringConfig()

# The stages of a recall in order, as "module:Class" (each class follows the Stage protocol of
# app/read/context.py; app/read/pipeline.py imports them when the read track is built, so a wrong entry fails at
# start-up, and runs them). Adding a stage: its module, plus its entry here. The thinking mode picks the recipe;
# slow = fast + multi-query, the knowledge gap, cascade recall and CRAG (seed 000). The selection funnel is in
# both, switched per call (RecallOptions.funnel) or by FunnelConfig.enabled.
FAST_RECIPE: tuple[str, ...] = (
    "app.read.search:FastSearch",
    "app.read.provenance:ProvenanceExpansion",
    "app.read.continuity:SessionContinuity",
    "app.read.hops:HopExpansion",
    "app.read.speaker:SpeakerMatch",
    "app.read.cohesion:SessionCohesion",
    "app.read.spread:SessionSpread",
    "app.read.rerank:RerankStage",
    "app.read.current:CurrentFirst",
    "app.read.funnel:SelectionFunnel",
)
SLOW_RECIPE: tuple[str, ...] = (
    "app.read.search:FastSearch",
    "app.read.provenance:ProvenanceExpansion",
    "app.read.continuity:SessionContinuity",
    "app.read.hops:HopExpansion",
    "app.read.funnel:MultiQuery",
    "app.read.gap:KnowledgeGap",
    "app.read.speaker:SpeakerMatch",
    "app.read.cohesion:SessionCohesion",
    "app.read.spread:SessionSpread",
    "app.read.rerank:RerankStage",
    "app.read.current:CurrentFirst",
    "app.read.funnel:SelectionFunnel",
    "app.read.cascade:CascadeRecall",
    "app.read.crag:CragEvaluator",
)

PROFILES: dict[str, IntentProfile] = {
    "entity_lookup": IntentProfile("entity_lookup", replace(_BASE, semantic_w=0.5 * SEMANTIC_SCALE),
                                   RerankBlend(0.2, 0.8), RetrievalMode.LOCAL, "fast"),
    "factual": IntentProfile("factual", replace(_BASE, trust_w=0.45), RerankBlend(), RetrievalMode.LOCAL, "fast"),
    "conceptual": IntentProfile("conceptual", replace(_BASE, semantic_w=0.4 * SEMANTIC_SCALE), RerankBlend(),
                                RetrievalMode.GLOBAL, "slow"),
    "exploratory": IntentProfile("exploratory", replace(_BASE, recency_w=0.3), RerankBlend(0.5, 0.5),
                                 RetrievalMode.GLOBAL, "slow"),
    "cross_domain": IntentProfile("cross_domain", _BASE, RerankBlend(), RetrievalMode.HYBRID, "slow"),
    "unknown": IntentProfile("unknown", _BASE, RerankBlend(), RetrievalMode.LOCAL, "fast"),
}


@dataclass(frozen=True, slots=True)
class ReadConfig:
    """The read track's knobs that are not per intent."""

    search: SearchConfig = field(default_factory=SearchConfig)
    gate: GateConfig = field(default_factory=GateConfig)
    funnel: FunnelConfig = field(default_factory=FunnelConfig)
    continuity: ContinuityConfig = field(default_factory=ContinuityConfig)
    speaker: SpeakerConfig = field(default_factory=SpeakerConfig)
    cohesion: CohesionConfig = field(default_factory=CohesionConfig)
    spread: SpreadConfig = field(default_factory=SpreadConfig)
    hops: HopConfig = field(default_factory=HopConfig)
    current: CurrentConfig = field(default_factory=CurrentConfig)
    provenance: ProvenanceConfig = field(default_factory=ProvenanceConfig)
    # ScoringConfig fields set over every intent's profile, as (name, value) pairs: how a benchmark's --tune
    # tries a scoring coefficient (app/bench/folds.py); empty in service.
    scoring_overrides: tuple[tuple[str, Any], ...] = ()
    candidates: int = 30  # scored candidates kept for rerank / format (at least k)
    # Send the fast search's sparse side ahead of the models (app/read/ahead.py; round 4 of docs/recall-cpu.md):
    # the same results; PostgreSQL runs the sparse rail while the process embeds and classifies the question.
    sparse_ahead: bool = True
    default_k: int = 10
    max_k: int = 200
    default_token_budget: int = 2000
    cards_share: float = 0.6  # 60/40 split between cards and cascade_cards
    long_tokens: int = 200  # memories longer than this show their summary + an expand handle
    near_dup_cos: float = 0.9  # the formatter keeps the best of near-duplicates
    cascade_hops: int = 2
    ppr_damping: float = 0.85
    cascade_k: int = 10
    # GLOBAL: the communities of this Leiden resolution (CommunityConfig.default_resolution), at most 200 of their
    # members' memories scored.
    community_resolution: float = 1.0
    community_evidence: int = 200
    router_alpha: float = 0.25
    router_min_samples: int = 50
    prefetch_ttl_s: int = 300
    recipes: tuple[tuple[Thinking, tuple[str, ...]], ...] = (("fast", FAST_RECIPE), ("slow", SLOW_RECIPE))


@dataclass(frozen=True, slots=True)
class RecallOptions:
    """What a caller may choose: the output format and budget, the times, a thinking override, how many."""

    format: Format = "cards"
    token_budget: int | None = None
    as_of: datetime | None = None
    known_at: datetime | None = None
    thinking: Thinking | None = None
    k: int | None = None
    session_id: str | None = None
    funnel: bool | None = None  # switch seed 003's selection funnel on/off for this call
    use_prefetch: bool = True
    writeback: bool = True
