"""SpeakerMatch: in a conversation among named people, what a person said is the first evidence about them.

A transcript among several people is written as turns of the form ``Name: text``. A question that names one of
them ("What does Melanie do to destress?", "How did Melanie feel about her family supporting her?") is about
what that person said, did or felt, and both rails also find the other speaker's turns that only address them
("Thanks, Melanie!", "Wow, Melanie, that painting is amazing"): the name is in the text, and in a short turn it
dominates the vector. So a candidate whose speaker the query names has its score multiplied by ``weight``.

A candidate's speaker is its text's ``Name:`` prefix. Memories without one are left as they are: turns of
``user`` / ``assistant`` roles without a name prefix, summaries ("user: ..."), memories written directly, and
sentence-level units that dropped the prefix (giving those their turn's speaker, looked up by provenance,
measured 0.767 against 0.769 without: the boost then also lifts fragments like "They're amazing."). A vault
without named speakers sees no change and no cost.

Measured on the LoCoMo dev split (weight x1.2 / 1.5 / 2 / 3): coverage@10 0.737 -> 0.758 / 0.765 / 0.769 /
0.776, @5 0.627 -> 0.666 / 0.677 / 0.686 / 0.686; LongMemEval unchanged (no named speakers). The default, 2, is
"the named person's own words count double": above it the boost turns into a filter on the speaker.

The same holds for the one person every vault has: a question about its asker ("Can you suggest some useful
accessories for my phone?", "What did I decide about...") is about what the user said. The user's own turns (role
``user``, no name prefix) and the units drawn from them get ``first_person_weight``: an assistant's long answers
share the request's topic words ("gaming accessories for my new PS5") without the user's situation ("the cracked
screen protector on my iPhone 13 Pro"). Measured on LongMemEval dev (x1.15 / 1.3 / 1.5 / 2): NDCG@10 0.922 ->
0.927 / 0.934 / 0.933 / 0.933, all@10 0.983 -> 1.0 at each, any@5 0.983 at x1.3 and below, 0.966 above;
LoCoMo (third-person questions) unchanged.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, ClassVar

from app.read.config import SpeakerConfig
from app.read.context import ReadStage, RecallContext
from app.read.search import Candidate

if TYPE_CHECKING:
    from app.read.config import ReadConfig
    from app.services import Services

_NAME = r"[A-Z][\w'’.-]{0,30}"
_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|I'd|I'll|I’m|I’ve|me|my|mine|myself)\b|我", re.I)
_PREFIX = re.compile(rf"^\s*({_NAME}(?: {_NAME}){{0,2}})\s*:\s")
_QUERY_NAME = re.compile(r"\b[A-Z][\w-]*")
_TITLES = frozenset({"Dr.", "Mr.", "Mrs.", "Ms.", "Prof."})


def first_person(query: str) -> bool:
    """The question is about its asker: I, me, my (or 我)."""
    return bool(_FIRST_PERSON.search(query))


def speaker_of(text: str) -> str | None:
    """The ``Name`` of a ``Name: text`` turn, or None."""
    m = _PREFIX.match(text)
    return m.group(1) if m else None


def query_names(query: str) -> frozenset[str]:
    """Capitalized words of the query, possessives stripped ("Melanie's" -> "Melanie"). Only words that turn out
    to be a candidate's speaker matter, so "What" or "Can" in the set is harmless."""
    return frozenset(m.group(0) for m in _QUERY_NAME.finditer(query))


def named(speaker: str | None, names: frozenset[str]) -> bool:
    if not speaker:
        return False
    return any(w.rstrip(".") in names for w in speaker.split() if w not in _TITLES)


class SpeakerMatch(ReadStage):
    name: ClassVar[str] = "speaker"

    def __init__(self, config: SpeakerConfig | None = None) -> None:
        self.config = config or SpeakerConfig()

    @classmethod
    def build(cls, services: Services, config: ReadConfig) -> SpeakerMatch:
        return cls(config.speaker)

    async def __call__(self, ctx: RecallContext, cands: list[Candidate]) -> list[Candidate]:
        cfg, query = self.config, ctx.query
        if not cfg.enabled or not cands:
            return cands
        speakers = {c.id: speaker_of(c.text) or speaker_of(c.content) for c in cands}
        factor: dict[int, float] = {}
        names = query_names(query)
        boosted = {cid for cid, s in speakers.items() if named(s, names)} if names and cfg.weight != 1.0 else set()
        if boosted and len(boosted) < len(cands):  # nobody named, or everybody: the order would not change
            factor.update(dict.fromkeys(boosted, cfg.weight))
            ctx.count("speaker.boosted", len(boosted))
            ctx.emit(names=sorted({speakers[i] for i in boosted}), boosted=len(boosted))
        if cfg.first_person_weight != 1.0 and first_person(query):
            own = {c.id for c in cands if c.source_kind == "user" and speakers[c.id] is None}
            if own and len(own) < len(cands):
                factor.update(dict.fromkeys(own, cfg.first_person_weight))
                ctx.count("speaker.first_person", len(own))
                ctx.emit(first_person=len(own))
        if not factor:
            return cands
        out = [c.with_score(c.score * factor[c.id]) if c.id in factor else c for c in cands]
        return sorted(out, key=lambda c: (-c.score, c.id))
