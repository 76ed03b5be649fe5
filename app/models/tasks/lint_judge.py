"""``lint_judge.v1``: one memory, or a pair, -> issues (seed 004, Knowledge Lint's LLM layer).

Issue kinds: ``contradiction`` (a pair that cannot both hold), ``duplicate`` (a pair saying the same), ``stale``
(a memory whose time words have expired), ``orphan`` (a memory linked to nothing). The lint's structural layer
runs in SQL; this task is what a rule cannot see, and its heuristic twin is the rule version of it.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Literal

from pydantic import BaseModel, Field

from app.models.tasks.base import Task, register
from app.models.tasks.resolve_conflict import ResolveConflictInput, resolve_conflict_heuristic
from app.models.tasks.text import content_terms, jaccard

IssueKind = Literal["contradiction", "stale", "orphan", "duplicate"]
Severity = Literal["low", "medium", "high"]
STALE_AFTER_DAYS = 30


class LintMemory(BaseModel):
    text: str = Field(min_length=1)
    recorded_at: datetime | None = None
    links: int | None = Field(default=None, description="Graph degree (entities/edges); None if unknown.")


class LintInput(BaseModel):
    memory: LintMemory
    other: LintMemory | None = None
    now: datetime | None = None


class LintIssue(BaseModel):
    kind: IssueKind
    severity: Severity
    reason: str = ""


class LintOutput(BaseModel):
    issues: list[LintIssue]


RELATIVE_TIME = re.compile(
    r"\b(today|tonight|tomorrow|yesterday|this (week|weekend|month|morning|afternoon|evening)|next (week|month|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday)|currently|right now|at the moment|these days|soon)\b|"
    r"今天|今晚|明天|昨天|這週|这周|本週|本周|下週|下周|這個月|这个月|下個月|下个月|目前|最近|現在|现在",
    re.I,
)
ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
FUTURE = re.compile(
    r"\b(will|going to|plan(ning)? to|deadline|due|scheduled|upcoming)\b|將|将|打算|計畫|计划|截止|預計|预计",
    re.I,
)


def _norm(text: str) -> str:
    return re.sub(r"\W+", " ", text.lower()).strip()


def lint_judge_heuristic(payload: LintInput) -> LintOutput:
    """Pair: identical after normalization -> duplicate/high; term Jaccard >= 0.85 -> duplicate/medium; the conflict
    rules say SUPERSEDE -> contradiction (high at confidence >= 0.75, else medium).
    Single: relative time words ("tomorrow", "this week", 明天, 目前) in a memory recorded more than 30 days before
    ``now`` -> stale/medium; a future-tense memory about an ISO date already past -> stale/high;
    ``links == 0`` -> orphan/low."""
    issues: list[LintIssue] = []
    m, o = payload.memory, payload.other
    if o is not None:
        if _norm(m.text) == _norm(o.text):
            issues.append(LintIssue(kind="duplicate", severity="high", reason="identical text"))
        elif jaccard(content_terms(m.text), content_terms(o.text)) >= 0.85:
            issues.append(LintIssue(kind="duplicate", severity="medium", reason="same content terms"))
        else:
            older, newer = (m, o)
            if m.recorded_at and o.recorded_at and m.recorded_at > o.recorded_at:
                older, newer = o, m
            verdict = resolve_conflict_heuristic(ResolveConflictInput(existing=older.text, new=newer.text))
            if verdict.action == "SUPERSEDE":
                severity: Severity = "high" if verdict.confidence >= 0.75 else "medium"
                issues.append(LintIssue(kind="contradiction", severity=severity, reason=verdict.reason))
    now = payload.now or datetime.now(tz=m.recorded_at.tzinfo if m.recorded_at else None)
    if m.recorded_at is not None and RELATIVE_TIME.search(m.text):
        if now - m.recorded_at > timedelta(days=STALE_AFTER_DAYS):
            word = RELATIVE_TIME.search(m.text).group(0)  # type: ignore[union-attr]
            issues.append(
                LintIssue(
                    kind="stale",
                    severity="medium",
                    reason=f"{word!r} written {(now - m.recorded_at).days} days ago",
                )
            )
    if FUTURE.search(m.text):
        for y, mo, d in ISO_DATE.findall(m.text):
            try:
                when = datetime(int(y), int(mo), int(d), tzinfo=now.tzinfo)
            except ValueError:
                continue
            if when < now - timedelta(days=1):
                issues.append(
                    LintIssue(kind="stale", severity="high", reason=f"planned for {y}-{mo}-{d}, now past")
                )
                break
    if m.links == 0:
        issues.append(LintIssue(kind="orphan", severity="low", reason="linked to no entity or memory"))
    return LintOutput(issues=issues)


SYSTEM = """You are the knowledge linter of a personal memory vault. Given one memory, or a pair, list its issues:
- contradiction: the pair cannot both be true at the same time;
- duplicate: the pair says the same thing;
- stale: the memory's time reference has expired (e.g. "tomorrow" written months ago, a plan whose date passed);
- orphan: the memory is linked to nothing (links = 0) and says nothing about a known entity.
Severity low / medium / high. An empty list means no issue."""


def _render(p: LintInput) -> str:
    def show(label: str, x: LintMemory) -> str:
        extra = []
        if x.recorded_at:
            extra.append(f"recorded {x.recorded_at.isoformat()}")
        if x.links is not None:
            extra.append(f"links {x.links}")
        return f"{label}: {x.text}" + (f" ({', '.join(extra)})" if extra else "")

    lines = [show("Memory", p.memory)]
    if p.other is not None:
        lines.append(show("Other memory", p.other))
    if p.now:
        lines.append(f"Now: {p.now.isoformat()}")
    return "\n".join(lines)


LINT_JUDGE: Task[LintInput, LintOutput] = register(
    Task(
        name="lint_judge",
        version=1,
        input_model=LintInput,
        output_model=LintOutput,
        system=SYSTEM,
        render=_render,
        heuristic=lint_judge_heuristic,
        max_tokens=400,
    )
)
