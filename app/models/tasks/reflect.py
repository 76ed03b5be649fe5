"""``reflect.v1``: memories (a dream-loop snapshot) -> insights and knowledge gaps (seed 004, ``_reflect()``)."""

from __future__ import annotations

import math
import re
from itertools import combinations

from pydantic import BaseModel, Field

from app.models.tasks.base import Task, register
from app.models.tasks.extract_triples import SINGLE_VALUED, ExtractTriplesInput, extract_triples_heuristic
from app.models.tasks.resolve_conflict import ResolveConflictInput, resolve_conflict_heuristic
from app.models.tasks.text import content_terms, is_cjk, jaccard, key_phrases, stem

MAX_PAIRS = 400


class ReflectInput(BaseModel):
    memories: list[str]
    stats: dict[str, float | int | str] = Field(
        default_factory=dict, description="Snapshot counters, if any."
    )


class Insight(BaseModel):
    text: str = Field(min_length=1)
    support: list[int] = Field(default_factory=list, description="Indexes of the memories behind it.")
    confidence: float = Field(default=0.5, ge=0.0, le=1.0)


class Gap(BaseModel):
    topic: str = Field(min_length=1)
    reason: str = ""


class ReflectOutput(BaseModel):
    insights: list[Insight]
    gaps: list[Gap]


def reflect_heuristic(payload: ReflectInput) -> ReflectOutput:
    """Three rules over the snapshot:

    - Recurring theme: a key phrase found in >= 3 memories (or >= 2 of a small snapshot) -> insight.
    - Possible change: two memories the conflict rules would SUPERSEDE -> insight naming both.
    - Gap: a memory that is an open question (ends with ?) with no other memory sharing half its terms; and a
      recurring theme none of whose memories states a fact with a number, date or name -> "details unknown".
    """
    mems = payload.memories
    terms = [set(content_terms(m)) for m in mems]
    insights: list[Insight] = []
    gaps: list[Gap] = []
    min_support = 2 if len(mems) < 8 else 3
    for phrase in key_phrases(mems, limit=8):
        p_terms = set(content_terms(phrase)) or {stem(phrase.lower())}
        support = [i for i, t in enumerate(terms) if p_terms <= t or phrase.lower() in mems[i].lower()]
        if len(support) >= min_support:
            zh = is_cjk(phrase)
            text = (
                f"反覆出現的主題：{phrase}（{len(support)} 則記憶）"
                if zh
                else f"Recurring theme: {phrase} ({len(support)} memories)"
            )
            insights.append(
                Insight(text=text, support=support, confidence=min(0.9, 0.4 + 0.1 * len(support)))
            )
            if not any(re.search(r"\d|[A-Z][a-z]+", mems[i][1:]) for i in support):
                gaps.append(Gap(topic=phrase, reason="often mentioned, but no concrete detail recorded"))
    # (subject, predicate) of single-valued facts: "I live in Boston" and "I moved to Seattle" share one.
    slots = [
        {
            (t.subject.lower(), "lives_in" if t.predicate == "moved_to" else t.predicate)
            for t in extract_triples_heuristic(ExtractTriplesInput(text=m)).triples
            if t.predicate in SINGLE_VALUED
        }
        for m in mems
    ]
    pairs = 0
    for i, j in combinations(range(len(mems)), 2):
        if pairs >= MAX_PAIRS:
            break
        if jaccard(terms[i], terms[j]) < 0.15 and not (slots[i] & slots[j]):
            continue
        pairs += 1
        verdict = resolve_conflict_heuristic(ResolveConflictInput(existing=mems[i], new=mems[j]))
        if verdict.action == "SUPERSEDE":
            insights.append(
                Insight(
                    text=f'Possible change: "{mems[i][:80]}" -> "{mems[j][:80]}" ({verdict.reason})',
                    support=[i, j],
                    confidence=round(verdict.confidence * 0.8, 3),
                )
            )
    for i, m in enumerate(mems):
        if not re.search(r"[?？]\s*$", m.strip()):
            continue
        answered = any(
            k != i
            and not re.search(r"[?？]\s*$", mems[k].strip())
            and len(terms[i] & terms[k]) >= max(2, math.ceil(0.6 * len(terms[i])))
            for k in range(len(mems))
        )
        if not answered:
            gaps.append(Gap(topic=m.strip(), reason="an open question no memory answers"))
    return ReflectOutput(insights=insights, gaps=gaps)


SYSTEM = """You reflect on a snapshot of a person's memories (the dream loop of a memory vault). Produce:
- insights: patterns, recurring themes, changes over time or tensions between memories, each citing the indexes of
  the memories that support it and a confidence between 0 and 1;
- gaps: topics the person cares about where the memories lack needed information, or questions left unanswered.
Only state what the memories support. Write in the memories' language."""


def _render(p: ReflectInput) -> str:
    lines = ["Memories:"] + [f"[{i}] {m}" for i, m in enumerate(p.memories)]
    if p.stats:
        lines.append("Stats: " + ", ".join(f"{k}={v}" for k, v in p.stats.items()))
    return "\n".join(lines)


def _postprocess(payload: ReflectInput, out: ReflectOutput) -> ReflectOutput:
    n = len(payload.memories)
    for ins in out.insights:
        if any(i < 0 or i >= n for i in ins.support):
            raise ValueError(f"insight cites a memory outside 0..{n - 1}")
    return out


REFLECT: Task[ReflectInput, ReflectOutput] = register(
    Task(
        name="reflect",
        version=1,
        input_model=ReflectInput,
        output_model=ReflectOutput,
        system=SYSTEM,
        render=_render,
        heuristic=reflect_heuristic,
        postprocess=_postprocess,
        max_tokens=1200,
    )
)
