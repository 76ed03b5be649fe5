"""CurrentFirst: a question about how things stand now is answered by the latest statement of it first.

People restate a count, a frequency or a duration as it changes: "I've got 1250 followers on Instagram now" in
May, "I think I'm close to 1300 now" three weeks later; "yoga twice a week", then "yoga classes, which is three
times a week". Asked "How many followers do I have on Instagram now?", both turns match, and the older one often
matches better (it repeats the question's words). The dream supersedes such an update among the facts it reads
(memories and atomic units), never a turn of the conversation (a turn stays true as a record of what was said),
and it is the turns that answer a LongMemEval question.

So for a question about a current state (:func:`asks_current`), two candidates of different sessions that each
state a value about the question's subject (a sentence with a value, :mod:`app.models.tasks.values`, and one of
the subject's terms), about the same terms, with different values, are an update: the later one is placed just
above the earlier (:func:`current_first`). Nothing is added or dropped; a candidate moves only within the best
``window``; two past events told apart by their times ("I ran 5 miles on Monday" / "3 miles on Tuesday") are not
an update, and neither is anything the assistant said (it restates the person's facts, it does not change them).

``asks_current`` reads the question's form: "now", "currently", "current", "still", "these days"...; or the
asker's own state in the present tense ("How many bikes do I own?", "How often do I attend yoga?", "How long have
I been using my Fitbit?", "What is my ...?"). Not: a question anchored in another time ("Before I bought the
gravel bike, ...", "When did I ...", "... last year", "in July", any time QueryTimeframe reads in it), a question
in the past tense, a request to the assistant ("Can you suggest ...?"), or one that adds values up, compares or
orders them ("in total", "how many more", "the order of"), which needs every statement, not the latest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, ClassVar

from app.models.tasks.text import split_sentences, term_set
from app.models.tasks.values import MONTHS, separate_events, values
from app.read.config import CurrentConfig
from app.read.context import ReadStage, RecallContext
from app.read.focus import focus
from app.read.search import Candidate

if TYPE_CHECKING:
    from app.read.config import ReadConfig
    from app.services import Services

_NOW = re.compile(
    r"\b(?:now|currently|current|these days|nowadays|at the moment|at present|presently|still|anymore|any more"
    r"|latest|most recent|so far|to date|up to date)\b|現在|现在|目前", re.I)
# The asker's own state in the present tense: "do I", "have I", "am I", "is my", "my ... is", "I own".
# A request to the assistant ("Can you suggest...", "Do you think...") is not about a state.
_ASKER_PRESENT = re.compile(
    r"\b(?:do|am|have)\s+i\b|\b(?:is|are)\s+(?:[\w'-]+\s+){0,4}?my\b|\bmy\s+(?:[\w'-]+\s+){0,3}?(?:is|are)\b"
    r"|\bi\s+(?:own|have|keep|use|live|work)\b", re.I)
_PAST = re.compile(r"\b(?:did|was|were|had|used to)\b", re.I)
_MONTH = "|".join((*MONTHS, "may"))  # values.py leaves "may" out of its values (a modal verb); "in May" dates
# Anchored in another time (or a hypothetical), or adding values up, comparing or ordering them: every statement
# counts, not the latest.
_ANCHORED = re.compile(
    r"\b(?:before|after|until|since|ago|when|if|originally|at first|initially|previously|back then|in the past"
    rf"|first time|last (?:week|month|year|time|summer|winter|spring|fall|autumn)|yesterday|(?:19|20)\d\d"
    rf"|(?:in|on|during|by) (?:{_MONTH}))\b", re.I)
_AGGREGATE = re.compile(
    r"\b(?:total|in all|altogether|combined|sum|average|difference|how many more|how much more|compared|"
    r"increase|decrease|change[ds]?|between|order|earliest|ranking)\b", re.I)
# Words that ask for the value rather than name what it is about.
_ASKING = term_set("many much often long time times number amount current currently now still present "
                   "latest recent far date days")
# Who restates a fact without changing it.
_NOT_STATEMENTS = frozenset({"assistant", "tool", "system", "web"})


def asks_current(query: str) -> bool:
    """Whether ``query`` asks how something stands now (see the module's docstring)."""
    if _ANCHORED.search(query) or _AGGREGATE.search(query):
        return False
    if _NOW.search(query):
        return True
    return bool(_ASKER_PRESENT.search(query)) and not _PAST.search(query)


@dataclass(frozen=True, slots=True)
class Statement:
    """What one candidate says about the question's subject: its values, the subject's terms it names, and the
    sentences that say it."""

    values: frozenset[str]
    terms: frozenset[str]
    text: str
    at: datetime


def statement(c: Candidate, subject: set[str]) -> Statement | None:
    """The sentences of ``c`` that hold a value and a term of ``subject``; None when there are none, when ``c``
    has no session or time, or when the assistant (or a tool) said it."""
    at = c.valid_at or c.recorded_at
    if not subject or not c.session_id or at is None or c.source_kind in _NOT_STATEMENTS:
        return None
    vals: set[str] = set()
    terms: set[str] = set()
    said: list[str] = []
    for sentence in split_sentences(c.content or c.text):
        v = values(sentence)
        hit = term_set(sentence) & subject
        if v and hit:
            vals |= v
            terms |= hit
            said.append(sentence)
    if not vals:
        return None
    return Statement(frozenset(vals), frozenset(terms), " ".join(said), at)


def updates(old: Statement, new: Statement, min_shared: float) -> bool:
    """``new`` restates ``old`` with another value: later, about the same subject terms (of the subject's terms
    that either names, at least ``min_shared`` named by both), values that differ, and not two past events at
    different times. Counted over either's terms, not the fewer's: "I spent two days in the stand" names one of
    the subject's terms ("spent"), which "I've spent around 5-6 hours on my abstract ocean sculpture" also
    names, among four more: not the same thing."""
    if new.at <= old.at or old.values == new.values:
        return False
    shared = len(old.terms & new.terms) / len(old.terms | new.terms)
    return shared >= min_shared and not separate_events(old.text, new.text, set(old.values), set(new.values))


def current_first(cands: list[Candidate], subject: set[str], config: CurrentConfig) -> tuple[list[Candidate], int]:
    """``cands`` with each later restatement placed just above the earliest-ranked statement it updates (within
    the best ``config.window``), its score raised to sit there; and how many moved."""
    head, tail = list(cands[: config.window]), cands[config.window:]
    said = {c.id: s for c in head if (s := statement(c, subject)) is not None}
    if len(said) < 2:
        return cands, 0
    moved: set[int] = set()
    for _ in range(len(head) ** 2):  # each move lifts a later statement over an earlier one: it ends
        move = _first_violation(head, said, config.min_shared)
        if move is None:
            break
        above, j = move
        c = head.pop(j)
        below = head[above].score
        score = below + abs(below) * 1e-6 + 1e-9 if above == 0 else (head[above - 1].score + below) / 2
        head.insert(above, c.with_score(score))
        moved.add(c.id)
    return head + tail, len(moved)


def _first_violation(head: list[Candidate], said: dict[int, Statement], min_shared: float
                     ) -> tuple[int, int] | None:
    """(i, j): the first candidate ``i`` ranked above a later restatement ``j`` of it (another session)."""
    for i, old in enumerate(head):
        so = said.get(old.id)
        if so is None:
            continue
        for j in range(i + 1, len(head)):
            new = head[j]
            sn = said.get(new.id)
            if sn is not None and new.session_id != old.session_id and updates(so, sn, min_shared):
                return i, j
    return None


class CurrentFirst(ReadStage):
    name: ClassVar[str] = "current"

    def __init__(self, config: CurrentConfig | None = None) -> None:
        self.config = config or CurrentConfig()

    @classmethod
    def build(cls, services: Services, config: ReadConfig) -> CurrentFirst:
        return cls(config.current)

    def active(self, ctx: RecallContext) -> bool:
        # a question that names a time (QueryTimeframe) asks about then, not now
        return self.config.enabled and ctx.timeframe is None and asks_current(ctx.query)

    async def __call__(self, ctx: RecallContext, cands: list[Candidate]) -> list[Candidate]:
        subject = term_set(focus(ctx.query) or ctx.query) - _ASKING
        subject = {t for t in subject if not values(t)}
        out, moved = current_first(cands, subject, self.config)
        if moved:
            ctx.count("current.moved", moved)
        ctx.emit(moved=moved, subject=sorted(subject))
        return out
