"""One Dedup at a time per vault, with no model call while it holds the vault, except to finish a write that
others kept from finishing.

Dedup reads a vault's candidates, decides, and applies what it decided. Two writes to one vault doing that at once
each decide on a vault without the other's block: 16 identical writes sent together left 16 memories. So the
three happen in one transaction that first takes the vault's write lock (``memvault.lock_vault_writes_v1``); the
next writer to that vault waits, then reads what the previous one committed (READ COMMITTED: its candidate query
starts after the lock was granted, so after the previous holder's commit).

Why a transaction-scoped advisory lock keyed by the vault, rather than:
- SERIALIZABLE: it aborts instead of waiting, and its predicate locks cover what Dedup reads (every block of a
  vault below 5,000, an index range above), so two writes to one vault would conflict all the same, each costing
  a rolled-back transaction and a retry rather than a wait.
- ``SELECT ... FOR UPDATE`` of the vault's row: it serializes the same writers but conflicts with the KEY SHARE
  lock that every insert referencing the vault takes (turns, recall_log, audit rows of other paths would queue
  behind a write); FOR NO KEY UPDATE avoids that but still holds up the vault's own updates (rename, schedule).
- An advisory lock touches no row, ends with the transaction whatever ends it, and keeps nothing else waiting.

What should not happen under the lock: a model call (an HTTP LLM can take seconds, and every writer of the vault
waits meanwhile, each holding a pooled connection). The embedding (``WriteTrack.screen``) is done before the
transaction opens. Dedup's question to the LLM (``resolve_conflict``, the uncertain band) and a MERGE's new vector
depend on the candidates read under the lock, so they cannot all be known before it: the transaction decides with
the answers it holds (:class:`ModelAnswers`); an item that needs one it lacks raises :class:`NeedModels`, the
transaction rolls back, the answer is got with no transaction open, and the write runs again (the heuristic
LLM, rules without a model or I/O, is one exception: ``LLM.instant``, asked where it is needed; an ``Embedder.instant``,
one in this process that embeds a text in milliseconds, is the other: a MERGE's text is embedded in place, through
the model seam, where the rollback, the rehearsal and the second transaction it saves cost more than the embedding:
~0.5 ms of database CPU a turn of a session close, measured). The first time, the
whole batch is rehearsed outside the lock (its candidates read as the vault is now, every question asked), so a
batch of many uncertain items costs one retry, not one per item.

Why the last tries ask the models under the lock all the same (optimistic, then pessimistic): an answer got outside
serves the next try only if the vault did not change meanwhile. With a slow embedder (e5-onnx, an HTTP one) and
several writers of one vault merging into the same blocks, it did change: each retry found its target merged by
another writer (a new merged text, a new vector to get), and the writes starved each other until one gave up with a
409 (16 writers, 40 ms an embedding: 3 of 32 writes failed, tests/integration/test_write_progress.py; ``bench
ingest --in-flight 4`` with e5-onnx failed the same way, docs/read-track-log.md round 11). So a write tries
:data:`OPTIMISTIC` times without asking under the lock (the first try finds the questions, the second uses the
answers: enough when nobody else writes the vault), then asks what it lacks while it holds the lock
(``ModelAnswers.asking``), and that try completes whatever the other writers do. The cost: the writes of that vault
wait for its model calls (the connections they hold included), which is bounded: a local model by its compute
(e5-onnx: ~10 ms a text), a remote one by its timeouts (``embedder_timeout_s`` with ``embedder_max_retries``,
``llm_timeout_s``; an open circuit breaker answers at once); writes to other vaults do not wait. The alternative, a
write that fails because other clients write at the same time, is not one a client can act on.

A :class:`~app.errors.StaleWrite` (a MERGE or SUPERSEDE target changed by a writer that takes no lock: a dream, an
edit, a deletion) reruns the write too; the lock does not keep those out, so it can recur on a pessimistic try as
well, and after :data:`ATTEMPTS` tries the write answers 409 naming that cause (nothing written; sending it again
is safe). Each such retry needs another lock-free change of the very rows it decides on, so this is rare.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import TypeVar
from uuid import UUID

import numpy as np
import psycopg

from app.db.connector import Database
from app.db.queries import Q
from app.errors import Conflict, StaleWrite
from app.models.tasks.resolve_conflict import ResolveConflictOutput
from app.write.dedup import Ask, Dedup

T = TypeVar("T")

# Transactions that decide without asking a model under the lock: the first finds the questions (a NeedModels),
# the second decides on the answers got outside; from the next one on, the write asks the models while it holds
# the lock, and completes.
OPTIMISTIC = 2
# Transactions one write may take before it gives up: past OPTIMISTIC only a StaleWrite (a target changed by a
# writer that takes no lock) reruns it.
ATTEMPTS = 8


class NeedModels(Exception):  # noqa: N818 - control flow, never shown to anyone
    """Dedup needs a model's answer the write does not hold yet (the LLM's, or a merged text's vector)."""

    def __init__(self, ask: Ask | None = None, text: str | None = None) -> None:
        super().__init__(ask.key if ask is not None else text)
        self.ask = ask
        self.text = text


class ModelAnswers:
    """What Dedup asked the models during one write, kept across its transactions. ``asking`` False (an optimistic
    try, inside the locked transaction): a question without an answer raises :class:`NeedModels`; True (outside
    it, or a pessimistic try: :func:`locked_write` sets it): the model is asked there and then."""

    def __init__(self, dedup: Dedup, embed: Callable[[list[str]], Awaitable[np.ndarray]], *,
                 asking: bool = False, instant_embed: bool = False) -> None:
        self.dedup = dedup
        self.embed = embed  # the embedder's embed_documents, through the model seam (app/models/calls.py)
        self.asking = asking
        self.instant_embed = instant_embed  # the embedder is ``instant``: a merged text is embedded in place
        self.conflicts: dict[str, ResolveConflictOutput] = {}
        self.vectors: dict[str, np.ndarray] = {}
        self.asked = 0  # model calls made (for tests and timing)

    def outside(self) -> ModelAnswers:
        """The same answers, asking the models on a miss (for a rehearsal outside the lock)."""
        other = ModelAnswers(self.dedup, self.embed, asking=True, instant_embed=self.instant_embed)
        other.conflicts, other.vectors = self.conflicts, self.vectors
        return other

    async def conflict(self, ask: Ask) -> ResolveConflictOutput:
        hit = self.conflicts.get(ask.key)
        if hit is None:
            if not (self.asking or self.dedup.llm.instant):
                raise NeedModels(ask=ask)
            hit = self.conflicts[ask.key] = await self.dedup.ask(ask)
            self.asked += 1
        return hit

    async def vector(self, text: str) -> np.ndarray:
        hit = self.vectors.get(text)
        if hit is None:
            if not (self.asking or self.instant_embed):
                raise NeedModels(text=text)
            [hit] = await self.embed([text])
            self.vectors[text] = hit
            self.asked += 1
        return hit

    async def answer(self, need: NeedModels) -> None:
        """Get what ``need`` lacks (no transaction open)."""
        outside = self.outside()
        if need.ask is not None:
            await outside.conflict(need.ask)
        if need.text is not None:
            await outside.vector(need.text)
        self.asked += outside.asked


async def locked_write(db: Database, vault_id: UUID, answers: ModelAnswers,
                       work: Callable[[psycopg.AsyncConnection], Awaitable[T]],
                       rehearse: Callable[[], Awaitable[None]] | None = None, *,
                       held: Callable[[float, float], None] | None = None) -> T:
    """Run ``work`` in one transaction of ``vault_id`` holding the vault's write lock, again after getting what a
    :class:`NeedModels` lacked (``rehearse`` first, once: it asks the whole batch's questions outside the lock) or
    after a :class:`StaleWrite`. ``work`` decides on ``answers`` and must start its decision afresh each time it
    runs; after :data:`OPTIMISTIC` tries ``answers`` asks the models itself (under the lock). ``held`` (a
    benchmark's): told each transaction's seconds waiting for the lock and holding it (until its commit or
    rollback ends); the lock's grant is then read back, one round trip more."""
    rehearsed = rehearse is None
    stale = 0
    for attempt in range(ATTEMPTS):
        if attempt == OPTIMISTIC:
            answers.asking = True  # pessimistic from here on: no NeedModels, the try completes
        t_wait = time.perf_counter()
        t_granted = None
        try:
            # Pipelined (app/db/connector.py): BEGIN, scope and lock travel with the first statement read (the
            # block ids), the writes of the apply with the next one read; ~4 round trips for a small write.
            async with db.transaction(vault_id, pipeline=True) as conn:
                cur = await conn.execute(Q.lock_vault_writes, {"vault": vault_id})
                if held is not None:
                    await cur.fetchone()
                    t_granted = time.perf_counter()
                out = await work(conn)
            return out
        except NeedModels as need:
            if not rehearsed:
                rehearsed = True
                assert rehearse is not None
                await rehearse()
            await answers.answer(need)  # nothing to ask when the rehearsal already did
        except StaleWrite:
            stale += 1
        finally:
            if held is not None and t_granted is not None:
                held(t_granted - t_wait, time.perf_counter() - t_granted)
    # Only StaleWrites end the last tries (a pessimistic try raises no NeedModels).
    raise Conflict(f"the memories this write would merge into or supersede were changed by other writers that do "
                   f"not wait for it (an edit, a deletion, the dream loop) at {stale} of its {ATTEMPTS} tries",
                   hint="nothing was written; send it again")
