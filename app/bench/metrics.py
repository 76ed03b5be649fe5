"""Retrieval metrics, as ``../shared/eval/README.md`` scores them.

LongMemEval is scored at session level: the returned memories are mapped to sessions through provenance, and
sessions are ranked by the first appearance of any of their memories; @k means the top k distinct sessions.
LoCoMo is scored per question as the fraction of its evidence turns covered by the top-k memories.
"""

from __future__ import annotations

import math
import re
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TypeVar

T = TypeVar("T", bound=Hashable)

_WS = re.compile(r"\s+")


# --- LongMemEval: sessions ----------------------------------------------------------------------------------

def rank_sessions(memory_sessions: Iterable[Iterable[T | None]]) -> list[T]:
    """Distinct sessions in order of first appearance; each memory gives its sessions (provenance order)."""
    seen: dict[T, None] = {}
    for sessions in memory_sessions:
        for s in sessions:
            if s is not None and s not in seen:
                seen[s] = None
    return list(seen)


def recall_any(ranked: Sequence[T], gold: Iterable[T], k: int) -> float:
    gold = set(gold)
    return float(bool(gold) and any(s in gold for s in ranked[:k]))


def recall_all(ranked: Sequence[T], gold: Iterable[T], k: int) -> float:
    gold = set(gold)
    return float(bool(gold) and gold <= set(ranked[:k]))


def ndcg(ranked: Sequence[T], gold: Iterable[T], k: int) -> float:
    """Binary relevance over distinct ranked items; the ideal ranking puts every relevant item first."""
    gold = set(gold)
    if not gold:
        return 0.0
    dcg = sum(1.0 / math.log2(i + 2) for i, s in enumerate(ranked[:k]) if s in gold)
    idcg = sum(1.0 / math.log2(i + 2) for i in range(min(len(gold), k)))
    return dcg / idcg


# --- LoCoMo: evidence coverage ------------------------------------------------------------------------------

def _norm(text: str) -> str:
    return _WS.sub(" ", text).strip().casefold()


@dataclass(frozen=True, slots=True)
class Memory:
    """One returned memory: its text and the ids of the turns its provenance points at."""

    text: str
    turn_ids: frozenset[int] = field(default_factory=frozenset)
    sessions: tuple[str, ...] = ()
    block_id: int | None = None


@dataclass(frozen=True, slots=True)
class EvidenceTurn:
    turn_id: int | None
    text: str


def covers(memory: Memory, turn: EvidenceTurn) -> bool:
    """Provenance points at the turn, or the memory's text contains the turn's text."""
    if turn.turn_id is not None and turn.turn_id in memory.turn_ids:
        return True
    needle = _norm(turn.text)
    return bool(needle) and needle in _norm(memory.text)


def evidence_coverage(memories: Sequence[Memory], evidence: Sequence[EvidenceTurn], k: int, *,
                      provenance: bool = True) -> float:
    """Fraction of the evidence turns covered by at least one of the top-k memories. ``provenance=False``
    counts a turn only when a returned text contains it whole (the eval README's wording): a sentence-level
    unit drawn from a longer turn then does not count."""
    if not evidence:
        return 0.0
    if not provenance:
        evidence = [EvidenceTurn(None, e.text) for e in evidence]
    top = memories[:k]
    return sum(any(covers(m, e) for m in top) for e in evidence) / len(evidence)


# --- cost and latency ---------------------------------------------------------------------------------------

@lru_cache(maxsize=1)
def _encoding():
    from quicktok import get_encoding

    return get_encoding("cl100k_base")


def count_tokens(texts: Sequence[str]) -> int:
    """cl100k tokens in the texts together (the tokenizer DESIGN.md names)."""
    if not texts:
        return 0
    enc = _encoding()
    return sum(enc.count(t) for t in texts)


def tokens_at(memories: Sequence[Memory], k: int = 10) -> int:
    return count_tokens([m.text for m in memories[:k]])


def percentile(values: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default); 0.0 for no values."""
    if not values:
        return 0.0
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def mean(values: Iterable[float]) -> float:
    xs = list(values)
    return sum(xs) / len(xs) if xs else 0.0
