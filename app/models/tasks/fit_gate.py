"""``fit_gate.v1``: keep/drop each retrieved candidate against the query's intent (seed 003, the selection funnel).

The gate is the precision step that neither similarity nor provenance carries: a vocabulary-rich note can match
on shared words while being off-topic. It is judged against the *subject domain* of the query (the seed's
calibration: a too-narrow angle over-drops). The heuristic twin keeps whenever it is unsure; only a candidate
that shares no content term with a query of at least two content terms, in the same script, is dropped.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from app.models.tasks.base import Task, register
from app.models.tasks.text import CJK_RE, content_terms, latin_words


class FitGateInput(BaseModel):
    query: str = Field(min_length=1)
    intent: str | None = Field(default=None, description="The subject domain to judge against, if known.")
    candidates: list[str]


class FitVerdict(BaseModel):
    index: int = Field(ge=0)
    keep: bool
    reason: str = ""


class FitGateOutput(BaseModel):
    verdicts: list[FitVerdict]

    def kept(self) -> list[int]:
        return [v.index for v in self.verdicts if v.keep]


def _script(text: str) -> str:
    cjk = len(CJK_RE.findall(text))
    latin = len(latin_words(text))
    if cjk and latin:
        return "mixed"
    return "zh" if cjk else "en"


def fit_gate_heuristic(payload: FitGateInput) -> FitGateOutput:
    """Content-term overlap (stemmed EN words, ZH bigrams); keep when unsure (see module doc)."""
    q_terms = set(content_terms(payload.query + " " + (payload.intent or "")))
    q_script = _script(payload.query)
    verdicts = []
    for i, text in enumerate(payload.candidates):
        d_terms = set(content_terms(text))
        shared = sorted(q_terms & d_terms)
        if shared:
            verdicts.append(FitVerdict(index=i, keep=True, reason=f"shares {', '.join(shared[:4])}"))
        elif len(q_terms) < 2 or len(d_terms) < 3:
            verdicts.append(FitVerdict(index=i, keep=True, reason="too little text to judge; kept"))
        elif _script(text) != q_script or q_script == "mixed":
            verdicts.append(FitVerdict(index=i, keep=True, reason="different language; kept"))
        else:
            verdicts.append(FitVerdict(index=i, keep=False, reason="no topic term in common with the query"))
    return FitGateOutput(verdicts=verdicts)


def _postprocess(payload: FitGateInput, out: FitGateOutput) -> FitGateOutput:
    """One verdict per candidate: out-of-range indexes are invalid; a missing verdict means keep (fail open)."""
    n = len(payload.candidates)
    by_index: dict[int, FitVerdict] = {}
    for v in out.verdicts:
        if v.index >= n:
            raise ValueError(f"verdict for candidate {v.index}, only {n} candidates")
        by_index.setdefault(v.index, v)
    return FitGateOutput(
        verdicts=[
            by_index.get(i, FitVerdict(index=i, keep=True, reason="no verdict; kept")) for i in range(n)
        ]
    )


SYSTEM = """You are the relevance gate of a memory retrieval system. For each candidate memory, decide whether it
is on-topic for the query's subject domain (keep) or matches only on shared words while being about something
else (drop). Judge against the subject domain, not a narrow angle: related background is kept. When unsure, keep.
Give one verdict per candidate, by its index, with a short reason."""


def _render(p: FitGateInput) -> str:
    lines = [f"Query: {p.query}"]
    if p.intent:
        lines.append(f"Subject domain: {p.intent}")
    lines.append("Candidates:")
    lines += [f"[{i}] {c}" for i, c in enumerate(p.candidates)]
    return "\n".join(lines)


FIT_GATE: Task[FitGateInput, FitGateOutput] = register(
    Task(
        name="fit_gate",
        version=1,
        input_model=FitGateInput,
        output_model=FitGateOutput,
        system=SYSTEM,
        render=_render,
        heuristic=fit_gate_heuristic,
        postprocess=_postprocess,
        max_tokens=1200,
    )
)
