"""Slow Thinker (seed 000, section IX; VoiceAgentRAG): predict the next questions, recall them ahead of time.

Deferred as a job when a turn is appended (``app.background.prefetch``). Five ops: ContextSampler (last 8 utterances) ->
QuestionGenerator (``predict_next_questions``, top 3) -> QuestionRanker (confidence, then continuity with the last
utterance) -> QuestionDeduplicator (questions already predicted in the last 5 minutes) -> QuestionEmitter (the
top 2 are recalled and stored in the UNLOGGED ``prefetch_cache`` for 300 s, sanitized before they are stored).

Admission control, all five must pass: the session has at least 3 turns; topic drift (1 - cosine of the last two
utterances with the rest of the window) at most 0.7; the last prediction for the session at least 30 s old; a
predicted question's confidence at least 0.4; the vault has at least 10 conversations (below: bypassed).

``recall`` looks here first (:class:`PrefetchCache`, the read track's shortcut, wired by ``Services``: this
module imports the read track, never the other way round); a hit is sanitized again on the way out by the
formatter's sanitizer, a miss costs one indexed lookup. Hit and miss counters are the vault's read counters (``services.read_counters``, app/read/stats.py).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from app.db.queries import Q
from app.read.config import RecallOptions
from app.read.context import StageClock
from app.read.recall import Prefetched
from app.read.sanitize import ReadSanitizer
from app.read.search import Candidate

if TYPE_CHECKING:
    from app.read.ahead import SparseAhead
    from app.read.unit import RecallUnit
    from app.services import Services
    from app.vaults import Vault


@dataclass(frozen=True, slots=True)
class Admission:
    min_turns: int = 3
    max_drift: float = 0.7
    min_interval_s: float = 30.0
    min_confidence: float = 0.4
    min_conversations: int = 10
    window: int = 8
    emit: int = 2
    dedup_window_s: int = 300
    ttl_s: int = 300


@dataclass
class PrefetchReport:
    admitted: bool
    reason: str
    predicted: list[dict[str, Any]] = field(default_factory=list)
    stored: list[str] = field(default_factory=list)


def query_hash(query: str) -> bytes:
    key = re.sub(r"[^\w]+", " ", query.lower()).strip()
    return hashlib.sha256(key.encode("utf-8")).digest()


def topic_drift(vectors: np.ndarray) -> float:
    """1 - cosine between the mean of the last two utterances and the mean of the earlier ones."""
    if len(vectors) < 4:
        return 0.0
    recent, earlier = vectors[-2:].mean(axis=0), vectors[:-2].mean(axis=0)
    denom = float(np.linalg.norm(recent) * np.linalg.norm(earlier)) or 1.0
    return 1.0 - float(recent @ earlier) / denom


def _to_json(c: Candidate) -> dict[str, Any]:
    d = asdict(c)
    for key in ("valid_at", "recorded_at"):
        if d[key] is not None:
            d[key] = d[key].isoformat()
    d["source_turn_ids"] = list(c.source_turn_ids)
    d["factors"] = dict(c.factors)
    return d


def _from_json(d: dict[str, Any]) -> Candidate:
    d = dict(d)
    for key in ("valid_at", "recorded_at"):
        if d.get(key):
            d[key] = datetime.fromisoformat(d[key])
    d["source_turn_ids"] = tuple(d.get("source_turn_ids") or ())
    factors = d.get("factors")
    d["factors"] = dict(factors) if isinstance(factors, dict) else {}  # an entry cached before names: none
    d["origin"] = "prefetch"
    return Candidate(**d)


class SlowThinker:
    def __init__(self, services: Services, admission: Admission | None = None) -> None:
        self.services = services
        self.admission = admission or Admission()

    async def run(self, vault: Vault, session_id: str) -> PrefetchReport:
        adm = self.admission
        db = self.services.db
        # ContextSampler
        rows = await db.fetchall(Q.prefetch_context, (session_id, adm.window),
                                 vault_id=vault.id)
        turns = [r for r in rows if r["content"]]
        session_turns = rows[0]["session_turns"] if rows else 0
        conversations = rows[0]["vault_sessions"] if rows else 0
        if conversations < adm.min_conversations:
            return self._skip(vault, "cold_start")
        if session_turns < adm.min_turns:
            return self._skip(vault, "short_conversation")
        recent = await db.fetchall(Q.prefetch_recent,
                                   (session_id, adm.dedup_window_s), vault_id=vault.id)
        if recent:
            age = (await db.fetchone(Q.seconds_since,
                                     (recent[0]["created_at"],)))["s"]
            if float(age) < adm.min_interval_s:
                return self._skip(vault, "recently_predicted")
        utterances = [t["content"] for t in turns]
        vectors = await self.services.models.embed_documents(self.services.embedder, utterances)
        drift = topic_drift(vectors)
        if drift > adm.max_drift:
            return self._skip(vault, "topic_drift")
        # QuestionGenerator
        from app.models.tasks.predict_next_questions import PREDICT_NEXT_QUESTIONS, PredictInput

        out = await self.services.llm.run(PREDICT_NEXT_QUESTIONS, PredictInput(utterances=utterances))
        last = utterances[-1].lower()
        # QuestionRanker: confidence, then continuity with the last utterance.
        ranked = sorted(out.questions, key=lambda q: (-q.confidence, -sum(w in last for w in q.question.lower().split())))
        predicted = [{"question": q.question, "confidence": q.confidence} for q in ranked]
        confident = [q for q in ranked if q.confidence >= adm.min_confidence]
        if not confident:
            report = self._skip(vault, "low_confidence")
            report.predicted = predicted
            return report
        # QuestionDeduplicator
        seen = {query_hash(r["query"]) for r in recent}
        fresh = [q for q in confident if query_hash(q.question) not in seen]
        report = PrefetchReport(True, "admitted", predicted)
        # QuestionEmitter
        track = self.services.read
        for q in fresh[: adm.emit]:
            ctx = await track.context(vault, q.question, RecallOptions(use_prefetch=False),
                                      track.config.default_k * 2, StageClock())
            cands = await track.retrieve(ctx)
            meta = track.meta(ctx)
            sanitizer = ReadSanitizer()
            clean = []
            for c in cands:
                text = sanitizer(c.id, c.text, where="prefetch_store")
                summary = sanitizer(c.id, c.summary, where="prefetch_store") if c.summary else None
                # Only sanitized text is cached: the raw content never enters the cache.
                clean.append(Candidate(**{**asdict(c), "text": text, "content": text, "summary": summary}))
            payload = {"session_id": session_id, "intent": meta["intent"], "mode": meta["mode"],
                       "thinking": meta["thinking"], "candidates": [_to_json(c) for c in clean],
                       "sanitize_hits": sanitizer.hits}
            await db.fetchone(Q.prefetch_put,
                              (query_hash(q.question), q.question, json.dumps(payload, default=str), q.confidence,
                               adm.ttl_s), vault_id=vault.id)
            if sanitizer.audits:
                await db.fetchone(Q.audit_read_sanitize,
                                  (json.dumps(sanitizer.audits),), vault_id=vault.id)
            report.stored.append(q.question)
            self.services.read_counters.incr(vault.id, "prefetch.stored")
        return report

    def _skip(self, vault: Vault, reason: str) -> PrefetchReport:
        self.services.read_counters.incr(vault.id, f"prefetch.skip.{reason}")
        return PrefetchReport(False, reason)


class PrefetchCache:
    """The read track's shortcut (:class:`app.read.recall.Shortcut`): a plain recall of a question the Slow
    Thinker predicted is answered from ``prefetch_cache``."""

    def __init__(self, services: Services) -> None:
        self.services = services

    def applies(self, options: RecallOptions) -> bool:
        """Only a plain recall: no times, no thinking override, no funnel switch, prefetch not refused."""
        return options.use_prefetch and options.as_of is None and options.known_at is None \
            and options.thinking is None and options.funnel is None

    def probe(self, query: str) -> bytes:
        """The cache's key for ``query``: what the recall sends with its sparse side (app/read/ahead.py)."""
        return query_hash(query)

    async def lookup(self, vault: Vault, query: str, unit: RecallUnit | None = None,
                     ahead: SparseAhead | None = None) -> Prefetched | None:
        """The row the recall's sparse side brought back with it (``ahead``, when the probe went with it), else
        read on the recall's ``unit`` (one statement scoping itself, or in its open transaction), or else in a
        transaction of its own."""
        key = query_hash(query)
        probed = await ahead.probed(key) if ahead is not None else None
        if probed is not None:
            row = probed[0]
        elif unit is None:
            row = await self.services.db.fetchone(Q.prefetch_get, (key,), vault_id=vault.id)
        else:
            row = await (await unit.execute(Q.prefetch_get, Q.prefetch_get_scoped, (key,))).fetchone()
        if row is None:
            self.services.read_counters.incr(vault.id, "prefetch.miss")
            return None
        self.services.read_counters.incr(vault.id, "prefetch.hit")
        payload = row["payload"]
        cands = [_from_json(d) for d in payload.get("candidates", [])]
        meta = {"intent": payload.get("intent", "unknown"), "mode": payload.get("mode", "LOCAL"),
                "thinking": payload.get("thinking", "fast"), "prefetched_query": row["query"],
                "prefetched_at": row["created_at"].isoformat()}
        return Prefetched(cands, meta)


async def prefetch_for_turn(services: Services, vault: Vault, session_id: str) -> PrefetchReport:
    """The job's body: run the Slow Thinker for the session a turn was just appended to."""
    return await SlowThinker(services).run(vault, session_id)
