"""Fast search + the 11 scoring stages: one SQL call (``memvault.recall_fast_v3``, scoping itself) per query.

Dense top-N (HNSW, or exact in a small vault) over the question and sparse top-N (rare tsvector terms) over its
focus (:mod:`app.read.focus`) fused by RRF in SQL, then the stages of ``sql/idempotent/070-scoring.sql``. When the
recall sent the sparse side ahead of its models for exactly this request (:mod:`app.read.ahead`), the call is
``recall_fast_v5`` given its rankings instead: the same rows. Python
passes the query vector, the times and the per-intent configuration as data, and turns rows into
:class:`Candidate` objects, each with its stage multipliers keyed by the SQL stage's name (``factors``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar
from uuid import UUID

import numpy as np
from pgvector import Vector

from app.db.queries import Q
from app.read import rail2
from app.read.ahead import SparseRequest
from app.read.config import SearchConfig
from app.read.context import ReadStage, RecallContext
from app.read.focus import focus
from app.safety.verdict import RULES

if TYPE_CHECKING:
    import psycopg

    from app.caches import TtlCache
    from app.read.config import ReadConfig
    from app.services import Services

# Up to how many blocks a vault's size is counted: memvault.sparse_scan_v1's bound for reading a vault's rows
# instead of the GIN index (sql/idempotent/060-read.sql).
SCAN_MAX = 5000


@dataclass(frozen=True, slots=True)
class Candidate:
    id: int
    score: float
    base: float
    cosine: float
    text: str
    content: str
    summary: str | None = None
    category: str | None = None
    kind: str = "memory"
    source_kind: str = "user"
    trust_score: float = 0.5
    confidence: float = 0.5
    tier: str = "hot"
    token_count: int = 0
    session_id: str | None = None
    source_turn_ids: tuple[int, ...] = ()
    valid_at: datetime | None = None
    recorded_at: datetime | None = None
    access_count: int = 0
    version: int = 1
    factors: dict[str, float] = field(default_factory=dict)  # SQL stage name -> multiplier, in stage order
    dup_of: int | None = None
    dup_cos: float | None = None
    dense_rank: int | None = None
    sparse_rank: int | None = None
    rerank: float | None = None
    origin: str = "fast"  # fast | context (SessionContinuity) | cascade | variant
    read_clean: bool | None = None  # the stored read-time sanitize verdict on content (None: none for today's rules)
    extra: dict[str, Any] = field(default_factory=dict)

    def with_score(self, score: float, **kw: Any) -> Candidate:
        return replace(self, score=score, **kw)

    def stage_factors(self) -> dict[str, float]:
        return {name: round(f, 4) for name, f in self.factors.items()}


def candidate_from_row(row: dict[str, Any], origin: str = "fast") -> Candidate:
    return Candidate(
        id=int(row["id"]), score=float(row["score"]), base=float(row["base"]), cosine=float(row["cosine"] or 0.0),
        text=row["text"], content=row["content"], summary=row.get("summary"), category=row.get("category"),
        kind=row.get("kind") or "memory", source_kind=row.get("source_kind") or "user",
        trust_score=float(row.get("trust_score") or 0.0), confidence=float(row.get("confidence") or 0.0),
        tier=row.get("tier") or "hot", token_count=int(row.get("token_count") or 0),
        session_id=row.get("session_id"), source_turn_ids=tuple(row.get("source_turn_ids") or ()),
        valid_at=row.get("valid_at"), recorded_at=row.get("recorded_at"),
        access_count=int(row.get("access_count") or 0), version=int(row.get("version") or 1),
        factors={name: float(f) for name, f in (row.get("factors") or {}).items()}, dup_of=row.get("dup_of"),
        dup_cos=float(row["dup_cos"]) if row.get("dup_cos") is not None else None,
        dense_rank=row.get("dense_rank"), sparse_rank=row.get("sparse_rank"), origin=origin,
        read_clean=row.get("read_clean"),
    )


async def vault_blocks(sizes: TtlCache[UUID, int], conn: psycopg.AsyncConnection, vault_id: UUID, cap: int) -> int:
    """The vault's block count, counted up to ``cap`` (past it, ``cap + 1``), probed at most once per ``sizes``'
    time to live (a minute; ``services.vault_sizes``, owned by Services): exact dense search below ``exact_below``,
    and the sparse rail's choice of the vault's rows or the GIN index (memvault.sparse_scan_v1, up to 5,000)."""
    n = sizes.get(vault_id)
    if n is None:
        cur = await conn.execute(Q.vault_block_count, (cap,))
        n = sizes.put(vault_id, int((await cur.fetchone())["n"]))
    return n


class FastSearch(ReadStage):
    """Hybrid search and scoring for one query (dense + sparse, RRF, 11 stages): the first stage of every recipe."""

    name: ClassVar[str] = "search"
    needs_db: ClassVar[bool] = True
    scopes_itself: ClassVar[bool] = True  # one statement, recall_fast_v3 / _v5, when the recall has no transaction open

    def __init__(self, services: Services, search: SearchConfig | None = None) -> None:
        self.services = services
        self.search = search or SearchConfig()

    @classmethod
    def build(cls, services: Services, config: ReadConfig) -> FastSearch:
        return cls(services, config.search)

    async def __call__(self, ctx: RecallContext, cands: list[Candidate]) -> list[Candidate]:
        return await self.find(ctx, ctx.query, ctx.qvec)

    def request(self, query: str, n: int, limit: int, noise_tags: tuple[str, ...], as_of: datetime | None,
                known_at: datetime | None) -> SparseRequest:
        """What the sparse side is asked for when ``query`` is searched in a vault of ``n`` blocks (as
        ``services.vault_sizes`` counts it) for ``limit`` candidates with these NoiseFilter tags: the rail's text
        (the question's focus: the subject's terms, not the request's framing) and every search key but the
        vectors. :meth:`find` asks it; a recall builds it before its models run, to send it ahead
        (app/read/ahead.py)."""
        search = {**self.search.params(n <= self.search.exact_below), "vault_blocks": n,
                  "noise_tags": list(noise_tags)}  # one NoiseFilter list
        # Each rail reads enough for the answer: 2k candidates, at least min_rail_n, at most dense_n / sparse_n.
        search["dense_n"] = min(self.search.dense_n, max(self.search.min_rail_n, 2 * limit))
        search["sparse_n"] = min(self.search.sparse_n, max(self.search.min_rail_n, 2 * limit))
        return SparseRequest(focus(query) or query, as_of, known_at, json.dumps(search))

    async def find(self, ctx: RecallContext, query: str, qvec: np.ndarray, *, variant: bool = False,
                   rail2_params: dict | None = None) -> list[Candidate]:
        """``query`` (the question, or a ``variant`` of it) searched and scored with ``ctx``'s times and scoring;
        ``rail2_params``: its second-rail keys when the caller embedded them already (``rail2.search_params_many``).
        The sparse side comes from ``ctx.ahead`` when the recall sent it ahead for exactly this request."""
        scoring, limit, sizes = ctx.scoring, ctx.limit, self.services.vault_sizes
        n = sizes.get(ctx.vault.id)
        if n is None:  # probed once a minute, in a transaction of the recall's (the search then runs in it too)
            n = await vault_blocks(sizes, ctx.conn or await ctx.unit.conn(), ctx.vault.id,
                                   max(self.search.exact_below, SCAN_MAX))
        request = self.request(query, n, limit, scoring.noise_tags, ctx.as_of, ctx.known_at)
        search = json.loads(request.search)
        sparse_query = request.query
        if self.search.rail2_on(ctx.thinking, variant=variant, gathers=ctx.gathers):  # the second dense rail
            search.update(rail2_params if rail2_params is not None else
                          await rail2.search_params(self.services, query))
            search["rail2_n"] = self.search.rail2_n or search["dense_n"]
        if self.search.focus_dense_w > 0 and sparse_query != query:  # a second dense query, from the focus
            search["qvec_focus"] = Vector(await self.services.models.embed_query(self.services.embedder,
                                                                                 sparse_query)).to_text()
        given = await ctx.ahead.take(request) if ctx.ahead is not None else None
        if given is not None:  # the sparse side sent ahead: the rest in one statement
            params = (qvec, ctx.as_of, ctx.known_at, json.dumps(search), json.dumps(scoring.params()), limit, *given)
            plain, scoped = Q.recall_fast_given, Q.recall_fast_given_scoped
        else:
            params = (qvec, sparse_query, ctx.as_of, ctx.known_at, json.dumps(search), json.dumps(scoring.params()),
                      limit)
            plain, scoped = Q.recall_fast, Q.recall_fast_scoped
        if ctx.conn is not None:  # a transaction is open (the caller's, or the recall's)
            cur = await ctx.conn.execute(plain, params)
        else:  # none: one statement that scopes itself, on the recall's connection
            cur = await ctx.unit.execute(plain, scoped, params, extra=(RULES,))
        return [candidate_from_row(r) for r in await cur.fetchall()]


async def score_blocks(ctx: RecallContext, ids: list[int], base: list[float], *, limit: int,
                       origin: str) -> list[Candidate]:
    """The same 11 stages over blocks found another way (SessionContinuity's neighbours, cascade recall's
    evidence blocks), on ``ctx``'s connection with its query vector, times and scoring."""
    if not ids:
        return []
    cur = await ctx.conn.execute(Q.score_candidates, (ids, base, ctx.qvec, ctx.as_of, ctx.known_at,
                                                    json.dumps(ctx.scoring.params()), limit))
    return [candidate_from_row(r, origin) for r in await cur.fetchall()]
