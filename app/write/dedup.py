"""Dedup, the third gate: SKIP / MERGE / SUPERSEDE / CREATE from similarity bands.

Bands use the dense cosine and the SimHash distance of the normalized text. The uncertain band goes to the
``resolve_conflict`` task (MERGE / SUPERSEDE / COEXIST); the decision is applied by SQL functions. Raw turn
chunks are the archive: they are only ever skipped (an exact repeat) or created, never merged or superseded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.models.base import LLM
from app.models.tasks.base import get_task
from app.models.tasks.resolve_conflict import (
    SLOT_MIN_COSINE,
    ResolveConflictInput,
    ResolveConflictOutput,
    same_slot,
)
from app.write.fingerprint import hamming

_SENT = re.compile(r"(?<=[.!?。！？;；])\s*")


@dataclass(frozen=True, slots=True)
class DedupConfig:
    candidates: int = 3
    # Below this nothing is a candidate. Low because a change rarely reads like the fact it replaces (see
    # app/models/tasks/resolve_conflict.py, same_slot): candidates below the uncertain band are only asked about
    # when the new text says it replaces them (a change cue and the same slot); every other decision needs
    # ambiguous_cosine or more, as when this floor was 0.75.
    min_cosine: float = SLOT_MIN_COSINE
    skip_cosine: float = 0.97       # near-identical meaning ...
    skip_hamming: int = 8           # ... and near-identical text: SKIP
    ambiguous_cosine: float = 0.80  # [ambiguous, skip) or a skip-level cosine with different text: ask
    chunk_skip_cosine: float = 0.995
    chunk_skip_hamming: int = 3


@dataclass(frozen=True, slots=True)
class Candidate:
    block_id: int
    cosine: float
    kind: str
    category: str | None
    content: str
    fingerprint: int
    same_hash: bool


@dataclass(frozen=True, slots=True)
class Verdict:
    decision: str  # CREATE | SKIP | MERGE | SUPERSEDE
    target: int | None  # block id (or, for in-batch duplicates, -(batch index) - 1)
    reasons: tuple[str, ...]
    merged_text: str | None = None


def merge_texts(old: str, new: str) -> str:
    """MERGE keeps everything either text says: the old text plus the new text's sentences it lacks."""
    old_s = [s for s in _SENT.split(old.strip()) if s]
    seen = {s.strip().casefold() for s in old_s}
    extra = [s for s in _SENT.split(new.strip()) if s and s.strip().casefold() not in seen]
    if not extra:
        return old
    if new.casefold().find(old.strip().casefold()) >= 0:
        return new  # the new text contains the old one
    joiner = "" if re.search(r"[\u3400-\u9fff]$", old.strip()) else " "
    return old.strip() + joiner + joiner.join(extra)


@dataclass(frozen=True, slots=True)
class Ask:
    """The uncertain band: ``resolve_conflict`` must answer about ``target`` before there is a verdict.
    ``key`` names the question (the task's input as JSON): an answer got earlier for the same key serves it."""

    target: Candidate
    payload: ResolveConflictInput

    @property
    def key(self) -> str:
        return self.payload.model_dump_json()


class Dedup:
    """``judge`` decides what the bands decide alone and names the question the uncertain band asks the LLM;
    ``settle`` turns the LLM's answer into the verdict. ``decide`` does both (the LLM called in between): the write
    track calls the LLM itself, outside its transaction (app/write/pipeline.py)."""

    def __init__(self, llm: LLM, config: DedupConfig = DedupConfig()) -> None:
        self.llm = llm
        self.config = config

    async def decide(self, kind: str, text: str, fingerprint: int, candidates: list[Candidate],
                     valid_at: str | None = None) -> Verdict:
        judged = self.judge(kind, text, fingerprint, candidates, valid_at)
        if isinstance(judged, Verdict):
            return judged
        return self.settle(judged, await self.ask(judged), text)

    async def ask(self, question: Ask) -> ResolveConflictOutput:
        """The LLM's answer to ``question``."""
        return await self.llm.run(get_task("resolve_conflict"), question.payload)

    def judge(self, kind: str, text: str, fingerprint: int, candidates: list[Candidate],
              valid_at: str | None = None) -> Verdict | Ask:
        cfg = self.config
        if not candidates:
            return Verdict("CREATE", None, ("no similar memory",))
        best = max(candidates, key=lambda c: (c.same_hash, c.cosine))
        dist = hamming(fingerprint, best.fingerprint)
        if best.same_hash:
            return Verdict("SKIP", best.block_id, (f"same text as block {best.block_id}",))
        if kind in ("chunk", "summary"):
            # A raw turn, or a session's summary (a digest of one occasion, met only by other summaries): kept
            # unless repeated; the facts in it are the units' to merge or supersede, never the digest's.
            if best.cosine >= cfg.chunk_skip_cosine and dist <= cfg.chunk_skip_hamming:
                return Verdict("SKIP", best.block_id,
                               (f"repeat of block {best.block_id} (cosine {best.cosine:.3f}, simhash {dist})",))
            return Verdict("CREATE", None, (f"{'raw turns' if kind == 'chunk' else 'session summaries'} are only "
                                            "skipped when repeated verbatim",))
        if best.cosine >= cfg.skip_cosine and dist <= cfg.skip_hamming:
            return Verdict("SKIP", best.block_id,
                           (f"near-duplicate of block {best.block_id} (cosine {best.cosine:.3f}, simhash {dist})",))
        mergeable = [c for c in candidates if c.kind in ("memory", "unit") and c.cosine >= cfg.ambiguous_cosine]
        if not mergeable:
            # A change ("switched to", "moved to", "no longer") of a fact in the same slot, at any cosine over the
            # floor: the question goes to resolve_conflict as in the uncertain band.
            slotted = [c for c in candidates if c.kind in ("memory", "unit") and same_slot(c.content, text, c.cosine)]
            if slotted:
                target = max(slotted, key=lambda c: c.cosine)
                return Ask(target, ResolveConflictInput(existing=target.content, new=text,
                                                        similarity=float(target.cosine), new_valid_at=valid_at))
            return Verdict("CREATE", None, (f"best match cosine {best.cosine:.3f} is below the uncertain band",))
        target = max(mergeable, key=lambda c: c.cosine)
        return Ask(target, ResolveConflictInput(existing=target.content, new=text, similarity=float(target.cosine),
                                                new_valid_at=valid_at))

    @staticmethod
    def settle(question: Ask, answer: ResolveConflictOutput, text: str) -> Verdict:
        target = question.target
        why = f"resolve_conflict with block {target.block_id} (cosine {target.cosine:.3f}): {answer.action}"
        if answer.reason:
            why += f" - {answer.reason}"
        if answer.action == "MERGE":
            merged = merge_texts(target.content, text)
            if merged == target.content:
                return Verdict("SKIP", target.block_id, (why + " (nothing new to merge)",))
            return Verdict("MERGE", target.block_id, (why,), merged_text=merged)
        if answer.action == "SUPERSEDE":
            return Verdict("SUPERSEDE", target.block_id, (why,))
        return Verdict("CREATE", None, (why + " (coexist)",))
