"""The write track: normalize -> NoiseFilter -> InjectionGuard + PoisoningDetector -> Dedup -> persist.

The gate order is enforced here and only here (seed 001: a payload that reached Dedup first could MERGE into a
clean memory). Persisting is one transaction: the blocks on both rails (pgvector + tsvector), their sources,
the audit entries (rejections included, with rule and ruleset version) and the graph job commit together.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import numpy as np
import psycopg
from quicktok import get_encoding

from app.db.queries import Q
from app.safety.verdict import RULES, text_sha256
from app.services import Services
from app.vaults import Vault
from app.worker.catalogue import defer_graph_build
from app.write.batch import BatchBlock, BatchDedup, CandidateRow, layer_of
from app.write.dedup import Ask, Candidate, Dedup, DedupConfig
from app.write.fingerprint import content_hash, simhash
from app.write.items import ItemResult, WriteItem
from app.write.mirror import VectorMirror
from app.write.provenance import trust_for
from app.write.screen import Merge, Screen
from app.write.screen import Prepared as _Prepared
from app.write.serial import ModelAnswers, locked_write
from app.write.timing import NO_CLOCK, StageClock

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")

# Pairs the bulk path's vector mirror sends per item beyond the k the database keeps: blocks it still holds as
# current that the table no longer does (another writer superseded them) leave the k nearest whole.
MIRROR_SPARE = 2

# A rehearsal's stand-in block ids (app/write/serial.py): above any id a vault will draw.
REHEARSAL_IDS = 1 << 62

T = TypeVar("T")

# Runs inside the write's transaction with what the write produced (idempotency records use it).
Hook = Callable[[psycopg.AsyncConnection, Any], Awaitable[None]]


# The columns the candidate queries return (sql/queries.sql: dedup_candidates, dedup_candidate_rows), in order.
CANDIDATE_COLUMNS = ("item", "block_id", "cosine", "kind", "category", "content", "fingerprint", "same_hash",
                     "nearest")


def candidate_row(item: int, block_id: int, cosine: float, kind: str, category: str | None, content: str,
                  fingerprint: int, same_hash: bool, nearest: bool) -> tuple[int, CandidateRow]:
    """A candidate query's row: (the item's position in the batch, the row)."""
    return item - 1, CandidateRow(block_id, float(cosine), kind, category, content, int(fingerprint),
                                  bool(same_hash), bool(nearest))


def _candidate_rows(cursor: Any) -> Callable[[Sequence[Any]], Any]:
    """psycopg row factory for the candidate queries: each row straight to :func:`candidate_row` (a dict a row,
    then a CandidateRow from it, was ~10% of the bulk path's critical thread)."""
    names = tuple(c.name for c in cursor.description or ())
    if names != CANDIDATE_COLUMNS:
        return tuple  # no result yet (the factory is asked before one arrives)
    return lambda values: candidate_row(*values)


def detect_lang(text: str) -> str:
    cjk = len(_CJK.findall(text))
    return "zh" if cjk and cjk >= 0.2 * max(1, len(text.replace(" ", ""))) else "en"


class WriteTrack:
    """The write track over a batch: each stage runs once for the whole batch (one embedding call, one candidate
    query, one insert), and Dedup decides the items in order as if each were written alone (app/write/batch.py).

    ``prepare`` = ``screen`` (no database: validate, normalize, embed, gates) then ``decide`` (ids, candidates,
    Dedup); ``apply`` persists on the caller's transaction. The bulk path (app/write/bulk.py) screens the next
    batch while this one is decided and written."""

    def __init__(self, services: Services, dedup: DedupConfig = DedupConfig(), *,
                 clock: StageClock | None = None, spare: int = 2) -> None:
        self.services = services
        self.clock: StageClock = clock or NO_CLOCK  # type: ignore[assignment]
        self.screening = Screen(services.settings, services.embedder, clock=self.clock)
        self.normalizer = self.screening.normalizer
        self.gates = self.screening.gates
        self.dedup = Dedup(services.llm, dedup)
        # Nearest rows asked beyond Dedup's k per item: covers that many of an item's nearest blocks being merged
        # into or superseded by earlier items of its batch before the vault is asked again for that item.
        self.spare = spare
        self.requeries = 0  # items asked for again because the spare did not cover their batch's changes
        self._tokens = get_encoding("cl100k_base")

    # --- public ---------------------------------------------------------------------------------------------

    async def remember(self, vault: Vault, items: Sequence[WriteItem], *, hook: Hook | None = None) -> list[ItemResult]:
        """Run items through the whole track: screened (embedded) first, then decided and persisted in one
        transaction under the vault's write lock (app/write/serial.py)."""
        prepared = await self.services.models.run(self.screen, items)

        async def work(conn: psycopg.AsyncConnection, answers: ModelAnswers) -> list[ItemResult]:
            await self.decide(vault, prepared, conn, answers=answers)
            results = await self.apply(conn, vault, prepared)
            if hook is not None:
                await hook(conn, results)
            return results

        return await self.locked(vault, prepared, work)

    async def locked(self, vault: Vault, prepared: list[_Prepared],
                     work: Callable[[psycopg.AsyncConnection, ModelAnswers], Awaitable[T]], *,
                     mirror: VectorMirror | None = None) -> T:
        """``work`` (which decides ``prepared`` on the answers it is given, then applies them) in one transaction
        holding the vault's write lock; the model calls Dedup needs are made outside it (app/write/serial.py)."""
        answers = ModelAnswers(self.dedup, self._embed, instant_embed=self.services.embedder.instant)

        async def rehearse() -> None:
            await self.decide(vault, prepared, None, mirror, answers=answers.outside(), rehearsal=True)

        t_commit = 0.0

        async def run(conn: psycopg.AsyncConnection) -> T:
            nonlocal t_commit
            out = await work(conn, answers)
            t_commit = time.perf_counter()
            return out

        # A rehearsal reads the candidates once more: worth it when several items may ask (one asks once anyway).
        several = sum(p.rejected is None for p in prepared) > 1
        out = await locked_write(self.services.db, vault.id, answers, run, rehearse if several else None,
                                 held=None if self.clock is NO_CLOCK else self._held)
        self.clock.add("commit", time.perf_counter() - t_commit)
        return out

    def _held(self, waited: float, held: float) -> None:
        """A transaction's wait for the vault's write lock and its hold of it (until its commit), for a benchmark."""
        self.clock.add("lock.wait", waited)
        self.clock.add("lock.held", held)

    async def _embed(self, texts: list[str]) -> np.ndarray:
        return await self.services.models.embed_documents(self.services.embedder, texts)

    def screen(self, items: Sequence[WriteItem], *, max_items: int | None = None,
               read_verdict: bool = True) -> list[_Prepared]:
        """What needs neither the database nor the other items' decisions (app/write/screen.py): validate,
        normalize, one embedding call for the batch, the gates, token counts. Runs in a worker thread (the bulk
        path overlaps it with the previous batch's database work, or runs it in a process of its own).
        ``max_items``: the batch size allowed (a request's by default); ``read_verdict``: see Screen.__call__."""
        return self.screening(items, max_items=max_items, read_verdict=read_verdict)

    async def decide(self, vault: Vault, prepared: list[_Prepared], conn: psycopg.AsyncConnection | None = None,
                     mirror: VectorMirror | None = None, *, answers: ModelAnswers | None = None,
                     rehearsal: bool = False) -> None:
        """Dedup for the screened items, in order: one query for the whole batch's candidates, then each item
        against the vault as the items before it left it. ``mirror`` (the bulk path's): which blocks are near each
        item comes from it instead of a scan of the vault (app/write/mirror.py); it learns what the batch
        changed from :meth:`mirror_written`, once the batch is committed. ``answers``: the model answers Dedup may
        use (app/write/serial.py; by default it asks the models itself). ``rehearsal``: a decision outside the
        lock whose only use is the questions it asks (no block ids drawn, the mirror not refreshed)."""
        passing = [p for p in prepared if p.rejected is None]
        for p in passing:  # a retry decides afresh
            p.verdict, p.block_id, p.merge, p.expected = None, None, None, None
        if not passing:
            return
        if answers is None:
            answers = ModelAnswers(self.dedup, self._embed, asking=True)
        t0 = time.perf_counter()
        batch = BatchDedup(self.dedup.config, self.spare)
        if rehearsal:
            # Stand-in ids above every real one (as the ids a batch draws are), so candidates tie-break alike.
            ids = [{"id": REHEARSAL_IDS + n} for n in range(len(passing))]
            rows = await self._candidate_rows(vault, passing, conn, batch.fetch_k, mirror)
        else:
            assert conn is not None, "block ids are drawn on the batch's transaction"
            if mirror is not None:
                await mirror.refresh(conn, vault.id)
            # The ids are read after the candidates: both statements travel in one round trip (pipelined, app/db/
            # connector.py); the candidates do not depend on the ids.
            drawn = await conn.execute(Q.allocate_block_ids, (len(passing),))
            rows = await self._candidate_rows(vault, passing, conn, batch.fetch_k, mirror)
            ids = await drawn.fetchall()
        for p, row in zip(passing, ids, strict=True):
            p.block_id = int(row["id"])
        for n, p in enumerate(passing):
            assert p.embedding is not None
            candidates = batch.candidates(p.item.kind, p.embedding, p.digest, rows.get(n, []), batch.fetch_k)
            if candidates is None:  # earlier items of the batch changed its nearest blocks: ask again, wider
                k = self.dedup.config.candidates + len(batch.changed)
                self.requeries += 1
                again = await self._candidate_rows(vault, [p], conn, k, mirror)
                candidates = batch.candidates(p.item.kind, p.embedding, p.digest, again.get(0, []), k)
                assert candidates is not None
            judged = self.dedup.judge(p.item.kind, p.item.content, p.fingerprint, candidates,
                                      p.item.said_at.isoformat())
            if isinstance(judged, Ask):
                judged = self.dedup.settle(judged, await answers.conflict(judged), p.item.content)
            p.verdict = judged
            t0 += await self._record(batch, p, candidates, answers)  # a merge's embedding is the embed stage's
        self.clock.add("dedup", time.perf_counter() - t0)

    @staticmethod
    def mirror_written(mirror: VectorMirror | None, prepared: list[_Prepared]) -> None:
        """Tell the bulk path's mirror what a committed batch superseded and merged into."""
        if mirror is None:
            return
        for p in prepared:
            v = p.verdict
            if v is None or v.target is None:
                continue
            if v.decision == "SUPERSEDE":
                mirror.superseded(v.target)
            elif v.decision == "MERGE" and p.merge is not None:
                mirror.merged(v.target, p.merge.embedding)

    async def apply(self, conn: psycopg.AsyncConnection, vault: Vault, prepared: list[_Prepared]) -> list[ItemResult]:
        """Persist decided items on ``conn``'s open transaction: one insert for the batch's new blocks, then its
        merges and supersessions in order, its sources, its audit entries and one graph job."""
        with self.clock("persist"):
            return await self._apply(conn, vault, prepared)

    # --- stages ---------------------------------------------------------------------------------------------

    async def _apply(self, conn: psycopg.AsyncConnection, vault: Vault, prepared: list[_Prepared]) -> list[ItemResult]:
        results: dict[int, ItemResult] = {p.index: p.rejected for p in prepared if p.rejected is not None}
        creating = [p for p in prepared if p.verdict and p.verdict.decision in ("CREATE", "SUPERSEDE")]
        await self._insert(conn, vault, creating)
        revisions: list[dict[str, Any]] = []
        merge_vectors: list[np.ndarray] = []
        sources, audits, touched = [], [], []
        for p in prepared:
            if p.rejected is not None:
                audits.append({"action": "write.reject", "rule": p.rejected.rule, "ruleset_version":
                               p.ruleset_version, "detail": {"gate": p.rejected.gate,
                               "reasons": list(p.rejected.reasons), "source_kind": p.item.source_kind,
                               "session_id": p.item.session_id, "excerpt": p.item.content[:200],
                               **(p.gate_detail or {})}})
                continue
            v = p.verdict
            assert v is not None
            if v.decision in ("CREATE", "SUPERSEDE"):
                block_id = p.block_id
                touched.append(block_id)
                if v.decision == "SUPERSEDE":
                    revisions.append({"action": "SUPERSEDE", "target": v.target, "block_id": block_id,
                                      "expected": p.expected})
            elif v.decision == "SKIP":
                block_id = v.target
            else:  # MERGE
                assert p.merge is not None
                block_id = v.target
                merge_vectors.append(p.merge.embedding)
                revisions.append({"action": "MERGE", "target": v.target, "expected": p.expected,
                                  "content": p.merge.content,
                                  "normalized": p.merge.normalized, "fingerprint": p.merge.fingerprint,
                                  "content_hash": p.merge.digest.hex(), "confidence": p.item.confidence,
                                  "token_count": p.merge.tokens, "vector": len(merge_vectors)})
                touched.append(block_id)
            related = v.target if v.decision != "CREATE" else None
            results[p.index] = ItemResult(p.index, v.decision, block_id, v.reasons, related_block_id=related)
            for turn_id in p.item.turn_ids or (None,):
                sources.append({"block_id": block_id, "turn_id": turn_id, "session_id": p.item.session_id,
                                "source_kind": p.item.source_kind, "said_at": p.item.said_at.isoformat(),
                                "decision": v.decision})
            audits.append({"action": f"write.{v.decision.lower()}", "block_id": block_id,
                           "detail": {"reasons": list(v.reasons), "related_block_id": related,
                                      "kind": p.item.kind, "session_id": p.item.session_id}})
        if revisions:
            await conn.execute(Q.revise_blocks,
                               (vault.id, json.dumps(revisions), merge_vectors or None))
        if sources:
            await conn.execute(Q.record_sources, (vault.id, json.dumps(sources)))
        if audits:
            await conn.execute(Q.audit, (vault.id, json.dumps(audits, default=str)))
        if touched:  # not read: it goes with the next statement read, or COMMIT
            await defer_graph_build(conn, vault_id=vault.id, block_ids=touched, read=False)
        return [results[i] for i in sorted(results)]

    async def _candidate_rows(self, vault: Vault, passing: list[_Prepared], conn: psycopg.AsyncConnection | None,
                              k: int, mirror: VectorMirror | None = None) -> dict[int, list[CandidateRow]]:
        """Each item's nearest current blocks (k of them at most) and exact-hash hits, by position in ``passing``."""
        # %b: the vectors travel in binary (500 of 512-d: 9 ms; as text, psycopg formats them in 430 ms).
        vectors = [p.embedding for p in passing]
        digests, layers = [p.digest for p in passing], [layer_of(p.item.kind) for p in passing]
        if mirror is None:
            query = Q.dedup_candidates
            params: tuple = (vault.id, vectors, digests, layers, k, self.dedup.config.min_cosine)
        else:
            items, ids = mirror.nearest(vectors, layers, k + MIRROR_SPARE, self.dedup.config.min_cosine)
            query = Q.dedup_candidate_rows
            params = (vault.id, items, ids, vectors, digests, layers, k, self.dedup.config.min_cosine)
        out: dict[int, list[CandidateRow]] = {}
        if conn is None:
            found = [candidate_row(*(r[c] for c in CANDIDATE_COLUMNS))
                     for r in await self.services.db.fetchall(query, params, vault_id=vault.id)]
        else:  # made as they are read: no dict a row (the bulk path reads ~2,500 rows a batch of 500)
            cur = conn.cursor(row_factory=_candidate_rows)
            found = await (await cur.execute(query, params)).fetchall()
        for item, row in found:
            out.setdefault(item, []).append(row)
        return out

    async def _record(self, batch: BatchDedup, p: _Prepared, candidates: list[Candidate],
                      answers: ModelAnswers) -> float:
        """What the item's verdict changes for the items after it; returns the seconds spent embedding a merge."""
        v = p.verdict
        assert v is not None and p.block_id is not None and p.embedding is not None
        if v.decision in ("MERGE", "SUPERSEDE"):  # the row as Dedup read it, which the revision must still find
            p.expected = next(c.content for c in candidates if c.block_id == v.target)
        if v.decision in ("CREATE", "SUPERSEDE"):
            batch.created(BatchBlock(p.block_id, p.item.kind, p.item.category, p.item.content, p.embedding,
                                     p.fingerprint, p.digest))
        if v.decision == "SUPERSEDE" and v.target is not None:
            batch.superseded(v.target)
        if v.decision != "MERGE":
            return 0.0
        text = v.merged_text or p.item.content
        norm = self.normalizer.normalize(text, p.item.said_at).text
        t0 = time.perf_counter()
        vector = await answers.vector(v.merged_text or p.normalized)
        seconds = time.perf_counter() - t0
        self.clock.add("embed", seconds)
        p.merge = Merge(text, norm, vector, simhash(norm), content_hash(norm), self._tokens.count(text))
        target = next(c for c in candidates if c.block_id == v.target)
        batch.merged(target, text, vector, p.merge.fingerprint, p.merge.digest)
        return seconds

    async def _insert(self, conn: psycopg.AsyncConnection, vault: Vault, creating: list[_Prepared]) -> None:
        if not creating:
            return
        rows = [{
            "kind": p.item.kind, "category": p.item.category, "content": p.item.content,
            "normalized": p.normalized, "norm_spans": p.spans, "fingerprint": p.fingerprint,
            "content_hash": p.digest.hex(), "lang": detect_lang(p.item.content), "token_count": p.tokens,
            "session_id": p.item.session_id, "source_kind": p.item.source_kind,
            "trust_score": trust_for(p.item.source_kind, p.item.trust_score), "confidence": p.item.confidence,
            "source_turn_ids": list(p.item.turn_ids), "valid_at": p.item.said_at.isoformat(),
            "metadata": {**p.item.metadata, "context": p.item.context} if p.item.context else p.item.metadata,
        } for p in creating]
        await conn.execute(Q.insert_blocks,
                           (vault.id, [p.block_id for p in creating], json.dumps(rows, default=str),
                            [p.embedding for p in creating]))
        judged = [p for p in creating if p.read_clean is not None]
        if judged:  # the read-time sanitizer's verdicts, screened with the items (app.safety.verdict)
            await conn.execute(Q.set_read_verdicts, ([p.block_id for p in judged], RULES,
                                                     [text_sha256(p.item.content) for p in judged],
                                                     [p.read_clean for p in judged]))

