"""SessionSpread: a question that gathers across occasions gets its answer from more than one conversation.

"What activities does Melanie partake in?", "Where has Melanie camped?", "Which cities has Jon visited?", "What is
the order of the six museums I visited?", "How many times have I been to the gym?": each asks for a list of
things that happened on different occasions, and each occasion is a session of its own. The best-scoring
candidates of such a question tend to come from one or two sessions (the one where the topic was discussed at
length: every turn of it shares the question's words), and SessionCohesion lifts them further; the other
occasions, each mentioned once, rank below them.

So when the question asks for many (``asks_many``), the candidates are re-ordered greedily: each next place goes
to the candidate with the best score x ``(1 - weight) ** n``, ``n`` being how many candidates of its session are
already placed. No candidate is added or dropped, and a question that asks for one thing keeps its order.

``turn_weight`` adds one place per turn, for every question (``turn_always``) or for those that ask for many: a
candidate that shares a source turn with one already placed (an atomic unit and its turn's chunk, one thing said
twice) counts x ``(1 - turn_weight)`` per such place, so the next place goes to another thing said. The formatter
already drops a unit after its chunk; a chunk after its unit says more and stays, and took a second place for the
same turn.

``asks_many`` reads the question's form only, as people write it in any conversation: "both" / "in common",
"how many times", "the order of", "list", a plural noun asked about ("What activities", "Which cities", "What kinds
of"), and the present perfect of experience ("Where has she camped?", "What have I bought?").
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, ClassVar

from app.read.config import SpreadConfig
from app.read.context import ReadStage, RecallContext
from app.read.search import Candidate

if TYPE_CHECKING:
    from app.read.config import ReadConfig
    from app.services import Services

_MARKERS = re.compile(
    r"\bboth\b|\bin common\b|\bhow many (?:times|different|kinds|types)\b|\bthe order of\b"
    r"|\b(?:list|name) (?:all|the|every)\b|\ball (?:the )?(?:\w+ )?(?:places|things|times|ways)\b"
    r"|哪些|几次|幾次|多少次", re.I)
# "What activities does...", "Which cities has...", "What kinds of art...": a plural noun asked about.
_PLURAL_ASKED = re.compile(
    r"^\W*(?:what|which)\s+(?:(?:kinds|types|sorts)\s+of\b|(?:[\w+-]+\s+)?(?!news\b)[a-z]*[^siu\W]s\s+"
    r"(?:has|have|had|did|does|do|is|are|was|were)\b)", re.I)
_AUX = re.compile(r"\b(?:do|does|did|is|are|was|were|am|has|have|had|can|could|will|would|should|shall|may|might"
                  r"|must)\b", re.I)
_WH = re.compile(r"^\W*(?:what|which|where|who|whom|how)\b", re.I)
_PROGRESSIVE = re.compile(r"^\s+(?:\S+\s+){0,3}?been\s+\w+ing\b", re.I)
_NOT_MANY = re.compile(r"^\W*(?:when|how long|why)\b", re.I)


def _present_perfect(query: str) -> bool:
    """The question's own auxiliary is has / have, not progressive: "Where has Melanie camped?", "What have I
    bought?" (an experience gathered over time), not "How does Gina describe the studio Jon has opened?"."""
    if not _WH.search(query):
        return False
    aux = _AUX.search(query)
    return aux is not None and aux.group(0).lower() in ("has", "have") \
        and _PROGRESSIVE.match(query[aux.end():]) is None


def asks_many(query: str) -> bool:
    """Whether ``query`` asks for several things gathered across occasions (see the module's docstring)."""
    if _NOT_MANY.search(query):
        return False
    return bool(_MARKERS.search(query) or _PLURAL_ASKED.search(query) or _present_perfect(query))


def spread(cands: list[Candidate], weight: float, turn_weight: float = 0.0) -> list[Candidate]:
    """``cands`` re-ordered greedily: score x (1 - weight) ** (candidates of its session already placed) x
    (1 - turn_weight) ** (candidates already placed that share one of its source turns, on its most shared turn)."""
    keep, keep_turn = 1.0 - weight, 1.0 - turn_weight
    left = sorted(cands, key=lambda c: (-c.score, c.id))
    placed: dict[str, int] = {}
    holders: dict[int, list[int]] = {}  # a source turn -> the candidates (by id) holding it
    if turn_weight > 0:
        for c in left:
            for t in set(c.source_turn_ids):
                holders.setdefault(t, []).append(c.id)
    on_turn: dict[int, int] = {}  # a source turn -> the placed candidates holding it
    shared: dict[int, int] = {}  # a candidate's id -> the placed candidates on its most shared turn
    out: list[Candidate] = []
    while left:
        best_i, best_v = 0, float("-inf")
        for i, c in enumerate(left):
            v = c.score * keep ** placed.get(c.session_id, 0) if c.session_id else c.score
            if c.id in shared:
                v *= keep_turn ** shared[c.id]
            if v > best_v:
                best_i, best_v = i, v
        c = left.pop(best_i)
        if c.session_id:
            placed[c.session_id] = placed.get(c.session_id, 0) + 1
        for t in set(c.source_turn_ids) if holders else ():
            on_turn[t] = on_turn.get(t, 0) + 1
            for other in holders[t]:
                shared[other] = max(shared.get(other, 0), on_turn[t])
        out.append(c)
    return out


class SessionSpread(ReadStage):
    name: ClassVar[str] = "spread"

    def __init__(self, config: SpreadConfig | None = None) -> None:
        self.config = config or SpreadConfig()

    @classmethod
    def build(cls, services: Services, config: ReadConfig) -> SessionSpread:
        return cls(config.spread)

    def _weights(self, query: str) -> tuple[float, float]:
        """(session weight, turn weight) for ``query``: each 0 where it does not apply."""
        cfg = self.config
        if not cfg.enabled:
            return 0.0, 0.0
        many = asks_many(query)
        return (cfg.weight if cfg.always or many else 0.0,
                cfg.turn_weight if cfg.turn_always or many else 0.0)

    def active(self, ctx: RecallContext) -> bool:
        return any(w > 0 for w in self._weights(ctx.query))

    async def __call__(self, ctx: RecallContext, cands: list[Candidate]) -> list[Candidate]:
        if len(cands) < 2:
            return cands
        out = spread(cands, *self._weights(ctx.query))
        moved = sum(1 for a, b in zip(cands, out, strict=True) if a.id != b.id)
        ctx.count("spread.applied")
        ctx.emit(moved=moved, sessions=len({c.session_id for c in out[: ctx.k]}))
        return out
