"""``summarize.v1``: three modes (seeds 003 and 004).

- ``session``: a 200-400-word summary of one session, indexed at session granularity (three-tier compression).
- ``tier_digest``: at most 400 characters, written when a block moves warm -> cold or cold -> frozen. One-way:
  the digest never claims more than the text says.
- ``community``: an L2 summary of an L1 community (a few sentences plus its themes).

The heuristic twin is extractive: it only ever copies sentences, so it cannot invent anything.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Literal

from pydantic import BaseModel, Field

from app.models.tasks.base import Task, register
from app.models.tasks.text import content_terms, key_phrases, split_sentences, truncate_chars, word_count

Mode = Literal["session", "tier_digest", "community"]
DIGEST_MAX_CHARS = 400
SESSION_MIN_WORDS, SESSION_MAX_WORDS = 200, 400
COMMUNITY_MAX_WORDS = 150
MIN_TERMS = 3
_SPEAKER = re.compile(r"^[\w .'-]{1,40}:\s+")


class SummarizeInput(BaseModel):
    mode: Mode
    texts: list[str] = Field(
        description="Turns (session), the block's content (tier_digest), or member memories."
    )
    title: str | None = Field(default=None, description="A session title or community label, if any.")


class SummarizeOutput(BaseModel):
    summary: str = Field(min_length=1)
    key_points: list[str] = Field(default_factory=list)


def _ranked_sentences(texts: list[str]) -> list[tuple[int, str, float, int]]:
    """(position, sentence, score, its word count) of each sentence worth keeping."""
    sentences = [s for t in texts for s in split_sentences(t)]
    # Terms without a "Speaker: " label, so that names of speakers do not make every line central.
    bodies = [_SPEAKER.sub("", s) for s in sentences]
    tf = Counter(term for b in bodies for term in set(content_terms(b)))
    ranked = []
    for i, s in enumerate(sentences):
        terms = set(content_terms(bodies[i]))
        if len(terms) < MIN_TERMS:  # greetings and acknowledgements carry nothing to keep
            continue
        # Centrality: how much of the whole text's vocabulary the sentence carries, damped for length.
        n = word_count(s)
        score = sum(tf[t] for t in terms) / (1.0 + 0.15 * max(0, n - 20)) + 0.5 * len(terms)
        ranked.append((i, s, score, n))
    return ranked


def _pick(texts: list[str], max_words: int) -> list[str]:
    ranked = _ranked_sentences(texts)
    chosen: list[tuple[int, str]] = []
    used = 0
    seen: set[frozenset[str]] = set()
    for i, s, _, n in sorted(ranked, key=lambda r: -r[2]):
        key = frozenset(content_terms(s))
        if key in seen:
            continue
        if used + n > max_words and chosen:
            continue
        seen.add(key)
        chosen.append((i, s))
        used += n
    return [s for _, s in sorted(chosen)]


def summarize_heuristic(payload: SummarizeInput) -> SummarizeOutput:
    """Extractive: rank sentences by term centrality, keep the best within the mode's budget, in original order.

    A session shorter than 200 words is returned whole (nothing to compress); a tier digest is cut to 400
    characters at a sentence or word boundary; a community summary ends with its themes (top key phrases)."""
    texts = [t for t in payload.texts if t and t.strip()]
    if not texts:
        return SummarizeOutput(summary="(empty)", key_points=[])
    themes = key_phrases(texts, limit=5)
    if payload.mode == "session":
        picked = _pick(texts, SESSION_MAX_WORDS)
        summary = " ".join(picked)
    elif payload.mode == "tier_digest":
        picked = _pick(texts, 60)
        summary = truncate_chars(" ".join(picked), DIGEST_MAX_CHARS)
    else:
        picked = _pick(texts, COMMUNITY_MAX_WORDS)
        lead = f"{payload.title}: " if payload.title else ""
        theme_line = f" Themes: {', '.join(themes)}." if themes else ""
        summary = lead + " ".join(picked) + theme_line
    if not summary.strip():  # no sentence survived the ranking (e.g. only symbols): keep the text's start
        summary = truncate_chars(" ".join(texts), DIGEST_MAX_CHARS)
    return SummarizeOutput(summary=summary.strip() or "(empty)", key_points=themes)


def _postprocess(payload: SummarizeInput, out: SummarizeOutput) -> SummarizeOutput:
    if payload.mode == "tier_digest" and len(out.summary) > DIGEST_MAX_CHARS:
        out = out.model_copy(update={"summary": truncate_chars(out.summary, DIGEST_MAX_CHARS)})
    if payload.mode == "session":
        source_words = sum(word_count(t) for t in payload.texts)
        n = word_count(out.summary)
        if n > SESSION_MAX_WORDS * 1.25 or (
            n < SESSION_MIN_WORDS * 0.5 and source_words >= SESSION_MIN_WORDS * 2
        ):
            raise ValueError(
                f"session summary of {n} words, expected {SESSION_MIN_WORDS}-{SESSION_MAX_WORDS}"
            )
    return out


SYSTEM = """You summarize for a personal memory vault. Never add facts the text does not state.
Modes:
- session: a 200-400 word summary of one conversation session: what was discussed, decided, left open and planned,
  with names, numbers and dates kept exactly.
- tier_digest: a digest of at most 400 characters of one memory that is being archived; keep the key facts.
- community: a short summary (under 150 words) of what a cluster of related memories is about, then its themes.
Write in the language of the text (English or Chinese). key_points: up to 5 short phrases."""


def _render(p: SummarizeInput) -> str:
    head = f"Mode: {p.mode}" + (f"\nTitle: {p.title}" if p.title else "")
    return head + "\nText:\n" + "\n".join(f"- {t}" for t in p.texts)


SUMMARIZE: Task[SummarizeInput, SummarizeOutput] = register(
    Task(
        name="summarize",
        version=1,
        input_model=SummarizeInput,
        output_model=SummarizeOutput,
        system=SYSTEM,
        render=_render,
        heuristic=summarize_heuristic,
        postprocess=_postprocess,
        max_tokens=900,
    )
)
