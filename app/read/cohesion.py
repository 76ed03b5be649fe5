"""SessionCohesion: a session that keeps coming back among the best candidates is what the question is about.

A conversation with an assistant is about one task: the phone accessories, the trip to Seattle, the guitar. A
question about that task ("Can you suggest some useful accessories for my phone?") finds many of its turns, each
a little: the request, the follow-ups, the answers. It also finds lone turns of other sessions that share a word
or two of the question ("I'm looking for some movie recommendations. I just installed my new soundbar...", found
for "music store this weekend"), and one of those can score above every turn of the session that matters.

So each candidate gains with the support of its own session among the ``top`` best candidates: the sum of the
other members' scores, each divided by the best score (a session holding three more candidates as good as the
best has support 3). The score is multiplied by ``1 + weight * min(support, cap)``. A lone match is left as it
is; a candidate outside the top still gains from its session's members inside it. Candidates without a session
(memories written directly, community summaries) are left as they are.

Measured over the kept dev vaults (the same ingest, weight / cap / top):
- LongMemEval_S NDCG@10 0.934 -> 0.961 (0.1 / 5 / 20); 0.953 over the best 30 or 50; 0.954 at weight 0.07;
  0.948 at 0.2 / 3; 0.942 at 0.3 / 3. The gain is in the preference questions, whose gold session ranked 2-5
  behind lone matches. any@5 and all@10 unchanged.
- LoCoMo evidence coverage@10 0.786 -> 0.788, @5 0.698 -> 0.701 (0.1 / 5 / 20); 0.780 at 0.2 / 3: a two-person
  chat session covers many topics, so a strong weight lifts a topic's neighbours over the one turn asked about.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from app.read.config import CohesionConfig
from app.read.context import ReadStage, RecallContext
from app.read.search import Candidate

if TYPE_CHECKING:
    from app.read.config import ReadConfig
    from app.services import Services


class SessionCohesion(ReadStage):
    name: ClassVar[str] = "cohesion"

    def __init__(self, config: CohesionConfig | None = None) -> None:
        self.config = config or CohesionConfig()

    @classmethod
    def build(cls, services: Services, config: ReadConfig) -> SessionCohesion:
        return cls(config.cohesion)

    async def __call__(self, ctx: RecallContext, cands: list[Candidate]) -> list[Candidate]:
        cfg = self.config
        if not cfg.enabled or cfg.weight == 0 or len(cands) < 2:
            return cands
        top = sorted(cands, key=lambda c: (-c.score, c.id))[:cfg.top]
        best = top[0].score
        if best <= 0:
            return cands
        share = {c.id: c.score / best for c in top}
        per_session: dict[str, float] = {}
        for c in top:
            if c.session_id:
                per_session[c.session_id] = per_session.get(c.session_id, 0.0) + share[c.id]
        out: list[Candidate] = []
        lifted = 0
        for c in cands:
            support = per_session.get(c.session_id, 0.0) - share.get(c.id, 0.0) if c.session_id else 0.0
            if support > 1e-9:
                lifted += 1
                out.append(c.with_score(c.score * (1.0 + cfg.weight * min(support, cfg.cap))))
            else:
                out.append(c)
        if not lifted:
            return cands
        ctx.count("cohesion.lifted", lifted)
        ctx.emit(lifted=lifted, sessions=sum(1 for s in per_session.values() if s > 1.0))
        return sorted(out, key=lambda c: (-c.score, c.id))
