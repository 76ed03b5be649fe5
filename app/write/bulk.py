"""The bulk path: imports and benchmarks through the same write track, in large batches, two stages at once.

``BulkIngest.memories`` and ``BulkIngest.sessions`` cut their input into batches of ``batch_items`` (memories, or
turns) and write each batch in one transaction, exactly as one ``remember`` / ``append_turns`` call would: every
gate, one embedding call, one candidate query, Dedup in order (app/write/batch.py), one insert, audit rows and one
graph job (built later by the worker, as for any write). While a batch is decided and written, the next one is
screened (normalized, gated, embedded) in a worker thread, or in a process of its own (``BulkConfig.screen_process``,
app/write/screen_process.py: the pure-Python gates then no longer share the GIL with the decisions): the embedder and
PostgreSQL then work at the same time (memories: the next two, ``BulkConfig.screen_ahead``).
Dedup's nearest blocks come from an in-memory copy of the vault's vectors (app/write/mirror.py: one exact matrix
product per batch below 20,000 blocks, an HNSW graph above), not from the database's scan. So the import needs no
HNSW index: a vault without one gets it once, after the import (what the worker's job would do within a minute;
a worker running meanwhile builds it when the vault crosses its size, and the inserts after that maintain it); a
vault that has one keeps it. ``progress`` is called after each committed batch with the number of memories or
turns it held (``tqdm``'s ``update`` fits).

With ``close``, each session's close decides its units through the same mirror, on the close's transaction
(the database's probe scanned the whole vault exactly for every close: the import has no HNSW index yet).

Each batch commits on its own: an error (a turn with an unknown role, say) stops the import at that batch and
leaves the batches before it written; the error says which session. No Slow Thinker prefetch is queued for
imported sessions (nobody is talking in them).
"""

from __future__ import annotations

import asyncio
import sys
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any, TypeVar

import psycopg

from app.db.queries import Q
from app.services import Services
from app.vaults import Vault
from app.write.items import ItemResult, WriteItem
from app.write.mirror import MirrorConfig, VectorMirror
from app.write.screen_process import ScreenProcess
from app.write.serial import ModelAnswers
from app.write.sessions import SessionTrack, TurnIn, TurnsResult, archive_turns
from app.write.timing import NO_CLOCK, StageClock

B = TypeVar("B")
S = TypeVar("S")
Progress = Callable[[int], Any]
Screener = Callable[..., Awaitable[list]]  # (items, *, max_items) -> the screened items, in order


@dataclass(frozen=True, slots=True)
class BulkConfig:
    # Items per batch and transaction. 256 turns of LongMemEval text is ~340 chunks: one embedding call of
    # ~45k tokens and one candidate query; larger batches hold a transaction (and its locks) longer for little.
    batch_items: int = 256
    build_ann_index: bool = True
    # Dedup's nearest blocks from an in-memory copy of the vault's vectors (exact below a size, a graph above),
    # instead of the database's scan (app/write/mirror.py); False: the database's, as an API call.
    vector_mirror: bool = True
    mirror: MirrorConfig = MirrorConfig()  # how the mirror searches (exact below a size, an HNSW graph above)
    # Batches of memories screened ahead of the one being written (sessions: 1, their screen reads the turns the
    # previous one archived). With one, a batch whose decisions go fast (few merges) waits for the next screen
    # while a slow one leaves the screening thread idle; two let the screen run ahead through the slow batches.
    screen_ahead: int = 2
    # The interpreter's GIL switch interval while an import runs (None: left as it is). A batch is decided on the
    # event loop's thread in many short steps that release the GIL (numpy, the driver's I/O), while the next
    # batches' gates run pure Python in the model threads: at the default 5 ms each release cost the loop up to
    # 5 ms to get the GIL back (BatchDedup.candidates, 0.05 ms of CPU an item, took 0.40 ms of wall against one
    # busy Python thread; 0.23 at 1 ms, 0.10-0.14 at 0.2 ms).
    gil_switch_s: float | None = 0.0005
    # Screen the batches (validate, normalize, embed, gates) in a process of its own (app/write/screen_process.py)
    # instead of the model threads: the writer's GIL then serves the decisions alone. 100k short memories, batches
    # of 500, three pairs against the threads started back to back on the shared machine (docs/benchmarks.md):
    # 282 / 613 / 580 memories/s against 268 / 371 / 453, the same decisions, the same CPU a memory. The child
    # costs a start (~2 s: its imports, the embedder, the gates) and ~560 MB resident (its own embedder).
    screen_process: bool = True
    # ... from this many items screened on (the first ones in the model threads meanwhile): the child's start is
    # paid by an import large enough to gain from it, not by a hook's or a few conversations' import.
    screen_process_after: int = 5000
    # Judge each memory for the read-time sanitizer while screening (app/safety/verdict.py, kept with its block), as
    # the API path does; False (the default) leaves it to the block's first recall, the lazy path of vaults older
    # than the verdicts (memvault.recall_fast_v3 runs the rules for a block without one, record_recall_v2 keeps
    # it). Judging costs the screening process ~0.06 ms of CPU a memory alone (5 interleaved pairs of 4,500
    # memories), 0.03-0.04 in two 100k pairs: 2-4% of the import's CPU, paid for every memory (docs/benchmarks.md,
    # "Stale statistics on `block`, and the bulk path's read verdict"); left to recalls it is paid once for the
    # blocks a recall shows: ~1.3 ms of process CPU for a recall whose ~10 cards all lack one
    # (docs/recall-cpu.md, round 3).
    read_verdict: bool = False


@dataclass(frozen=True, slots=True)
class SessionIn:
    """One session to import: its id and its turns in order (``said_at`` with a time zone)."""

    session_id: str
    turns: Sequence[TurnIn]


@dataclass(frozen=True, slots=True)
class _Part:
    session_id: str
    turns: Sequence[TurnIn]
    last: bool  # the session's last part in this import (close after it)


class BulkIngest:
    def __init__(self, services: Services, config: BulkConfig = BulkConfig(), *, clock: StageClock | None = None,
                 sessions: SessionTrack | None = None) -> None:
        """``sessions``: a session track to write through (``services.sessions``, say); else one of its own,
        timed by ``clock``."""
        self.services = services
        self.config = config
        self.sessions_track = sessions or SessionTrack(services, clock=clock)
        self.write = self.sessions_track.write
        # The last vault's mirror, kept for the next call on that vault: loading a large vault's vectors (and
        # building its graph) costs minutes at a million blocks, and a caller topping a vault up calls again.
        # It is refreshed from the table before every batch (app/write/mirror.py), so what others wrote between
        # the calls is seen as it is within one call.
        self._kept: tuple[Any, VectorMirror] | None = None
        self.screen_process: ScreenProcess | None = None  # the last import's screening process (config.screen_process)

    # --- public ---------------------------------------------------------------------------------------------

    async def memories(self, vault: Vault, items: Iterable[WriteItem], *,
                       progress: Progress | None = None) -> list[ItemResult]:
        """Remember every item; results in input order (``index`` is the position in ``items``)."""
        out: list[ItemResult] = []

        def batches() -> Iterator[list[WriteItem]]:
            batch: list[WriteItem] = []
            for item in items:
                batch.append(item)
                if len(batch) >= self.config.batch_items:
                    yield batch
                    batch = []
            if batch:
                yield batch

        mirror = self._mirror(vault)
        defer_index = await self._defer_index(vault)

        async def write(batch: list[WriteItem], prepared: list) -> None:
            async def work(conn: psycopg.AsyncConnection, answers: ModelAnswers) -> list[ItemResult]:
                await self.write.decide(vault, prepared, conn, mirror, answers=answers)
                return await self.write.apply(conn, vault, prepared)

            results = await self.write.locked(vault, prepared, work, mirror=mirror)
            self.write.mirror_written(mirror, prepared)
            base = len(out)
            out.extend(replace(r, index=base + r.index) for r in results)
            await self._after_batch(vault, len(batch), progress, defer_index)

        with gil_switch(self.config.gil_switch_s), self._screening() as screen:
            await _pipelined(batches(), lambda batch: screen(batch, max_items=len(batch)), write,
                             ahead=self.config.screen_ahead)
        await self._build_index(vault)
        return out

    async def sessions(self, vault: Vault, sessions: Iterable[SessionIn], *, close: bool = False,
                       progress: Progress | None = None) -> list[TurnsResult]:
        """Archive and write every session's turns (and close each one after its turns when ``close``); one
        result per session, in input order. With ``close``, a batch holds one session, so blocks are numbered in
        the order the API path gives them (a session's chunks, then its units and summary)."""
        out: dict[str, TurnsResult] = {}
        last_seen: dict[str, str] = {}  # each session's latest turn written by this import (the next one's context)
        mirror = self._mirror(vault)
        defer_index = await self._defer_index(vault)

        async def screen(parts: list[_Part]) -> tuple[list, list[tuple[int, int]]]:
            fresh = sorted({p.session_id for p in parts} - last_seen.keys())
            before = dict(last_seen)
            if fresh:
                rows = await self.services.db.fetchall(
                    Q.last_turns,
                    (vault.id, fresh), vault_id=vault.id)
                before.update({r["session_id"]: r["content"] for r in rows})
            items: list[WriteItem] = []
            where: list[tuple[int, int]] = []  # each item's (part, turn position)
            for n, part in enumerate(parts):
                self.sessions_track._validate(part.turns)
                made = self.sessions_track.turn_items(part.session_id, part.turns, range(len(part.turns)),
                                                      before.get(part.session_id))
                items += made
                where += [(n, item.turn_ids[0]) for item in made]
                before[part.session_id] = part.turns[-1].content
                last_seen[part.session_id] = part.turns[-1].content
            prepared = await screening(items, max_items=len(items))
            return prepared, where

        async def write(parts: list[_Part], screened: tuple[list, list[tuple[int, int]]]) -> None:
            prepared, where = screened
            async def work(conn: psycopg.AsyncConnection,
                           answers: ModelAnswers) -> tuple[list[tuple[list[int], bool]], list[ItemResult]]:
                archived = [await archive_turns(conn, vault, p.session_id, p.turns) for p in parts]
                ids = [a[0] for a in archived]
                for p, (n, pos) in zip(prepared, where, strict=True):
                    p.item = replace(p.item, turn_ids=(ids[n][pos],))
                await self.write.decide(vault, prepared, conn, mirror, answers=answers)
                return archived, await self.write.apply(conn, vault, prepared)

            archived, results = await self.write.locked(vault, prepared, work, mirror=mirror)
            self.write.mirror_written(mirror, prepared)
            ids = [a[0] for a in archived]
            by_part: dict[int, list[ItemResult]] = {}
            for r, (n, _) in zip(results, where, strict=True):
                by_part.setdefault(n, []).append(r)
            for n, part in enumerate(parts):
                had = out.get(part.session_id)
                chunks = [replace(r, index=i) for i, r in enumerate(by_part.get(n, []),
                                                                    start=len(had.chunks) if had else 0)]
                out[part.session_id] = TurnsResult(part.session_id, (*(had.turn_ids if had else ()), *ids[n]),
                                                   (*(had.chunks if had else ()), *chunks),
                                                   reopened=bool(had and had.reopened) or archived[n][1])
                if close and part.last:
                    await self.sessions_track.close(vault, part.session_id, mirror=mirror)
            await self._after_batch(vault, sum(len(p.turns) for p in parts), progress, defer_index)

        with gil_switch(self.config.gil_switch_s), self._screening() as screening:
            await _pipelined(self._session_batches(sessions, one_session=close), screen, write)
        await self._build_index(vault)
        return list(out.values())

    # --- helpers --------------------------------------------------------------------------------------------

    @contextmanager
    def _screening(self) -> Iterator[Screener]:
        """How this import screens a batch: in the model threads, then, once ``screen_process_after`` items were
        screened and with ``screen_process``, in a process of its own that lives as long as the block (shut down
        when the import ends or fails: no child outlives it). A small import (a hook's, a few conversations')
        never pays the child's start and memory."""
        child: ScreenProcess | None = None
        screened = 0

        async def screen(items: Sequence[WriteItem], *, max_items: int | None = None) -> list:
            nonlocal child, screened
            if child is None and self.config.screen_process and screened >= self.config.screen_process_after:
                child = ScreenProcess(self.services.settings,
                                      clock=None if self.write.clock is NO_CLOCK else self.write.clock)  # type: ignore[arg-type]
                self.screen_process = child
            screened += len(items)
            verdict = self.config.read_verdict
            if child is not None:
                return await child.screen(items, max_items=max_items, read_verdict=verdict)
            return await self.services.models.run(self.write.screen, items, max_items=max_items,
                                                  read_verdict=verdict)

        try:
            yield screen
        finally:
            if child is not None:
                child.close()

    def _mirror(self, vault: Vault) -> VectorMirror | None:
        if not self.config.vector_mirror:
            return None
        if self._kept is None or self._kept[0] != vault.id:
            self._kept = (vault.id, VectorMirror(self.services.embedder.dim, self.config.mirror))
        return self._kept[1]

    def _session_batches(self, sessions: Iterable[SessionIn], *, one_session: bool) -> Iterator[list[_Part]]:
        size = self.config.batch_items
        batch: list[_Part] = []
        held = 0
        for s in sessions:
            turns = list(s.turns)
            if not turns:
                continue
            for start in range(0, len(turns), size):
                part = _Part(s.session_id, turns[start:start + size], start + size >= len(turns))
                if batch and (one_session or held + len(part.turns) > size):
                    yield batch
                    batch, held = [], 0
                batch.append(part)
                held += len(part.turns)
            if one_session:
                yield batch
                batch, held = [], 0
        if batch:
            yield batch

    async def _defer_index(self, vault: Vault) -> bool:
        """Build the vault's HNSW index once, after the import, rather than when it crosses its size mid-import?
        Yes when Dedup reads the mirror (it needs no index) and the vault has none yet: maintaining the index
        on every insert cost 2.0 ms a memory against 0.25 without it (8,000 memories), and one build at the end
        ~0.7 ms a memory (100k: 72 s). A vault that has its index keeps it (its recall stays fast meanwhile)."""
        if not (self.config.build_ann_index and self.config.vector_mirror):
            return False
        from app.db.ann_index import has_index

        return not await has_index(self.services.db, vault.id)

    async def _build_index(self, vault: Vault) -> None:
        if self.config.build_ann_index:
            from app.db.ann_index import ensure

            await ensure(self.services.db, vault.id)

    async def _after_batch(self, vault: Vault, done: int, progress: Progress | None, defer_index: bool) -> None:
        if not defer_index:
            await self._build_index(vault)
        if progress is not None:
            progress(done)


@contextmanager
def gil_switch(seconds: float | None) -> Iterator[None]:
    """The interpreter's GIL switch interval set to ``seconds`` inside the block (None: unchanged), and put back
    after it unless someone set another meanwhile (two imports overlapping in one process: whichever ends, the
    interval ends as it was before both)."""
    if seconds is None:
        yield
        return
    before = sys.getswitchinterval()
    sys.setswitchinterval(seconds)
    mine = sys.getswitchinterval()
    try:
        yield
    finally:
        if sys.getswitchinterval() == mine:
            sys.setswitchinterval(before)


async def _pipelined(batches: Iterator[B], screen: Callable[[B], Awaitable[S]],
                     write: Callable[[B, S], Awaitable[None]], *, ahead: int = 1) -> None:
    """``write`` each batch in order while the next ``ahead`` ones are screened. With ``ahead`` 1 a batch's
    screening starts once the one before it has finished (the sessions' screen reads what the previous one
    left); with more, several run at once."""
    pending: deque[tuple[B, asyncio.Future[S]]] = deque()

    def top_up() -> None:
        while len(pending) < ahead:
            following = next(batches, None)
            if following is None:
                return
            pending.append((following, asyncio.ensure_future(screen(following))))

    try:
        top_up()
        while pending:
            current, screening = pending.popleft()
            screened = await screening
            top_up()
            await write(current, screened)
    except BaseException:
        for _, left in pending:
            left.cancel()
        await asyncio.gather(*(left for _, left in pending), return_exceptions=True)
        raise
