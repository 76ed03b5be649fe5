"""From conversation to memory (seed 003): raw turns are archived and chunked; closing a session produces
atomic units, a 200-400 word summary and a thread map.

Turns: archived verbatim in ``turn``; each turn is chunked at semantic boundaries and every chunk goes through
the write track (gates, Dedup) as a retrievable ``chunk`` block, in the same transaction as the archive row.
Close (an API call, or the worker's idle timeout): ``extract_atomic_units`` gives one-claim units (decisions
credited only from the user's turns), each passing the gates like any memory; ``summarize`` gives the
session summary (a ``summary`` block too); the thread map links this session's topics to earlier sessions.

A session never refuses its own continuation: turns sent to a closed session reopen it (an agent idle past
``session_idle_close_s`` and back, a file that reuses a session id), and the next close extracts only the turns
after the previous close: a new segment of the same session (sql/idempotent/045-sessions.sql says why a
segment rather than a new session or a re-close of everything). What earlier closes extracted stays as it was.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

import psycopg

from app.db.queries import Q
from app.errors import Conflict, InvalidInput, NotFound, PayloadTooLarge
from app.models.tasks.base import get_task
from app.services import Services
from app.vaults import Vault
from app.worker.catalogue import defer_prefetch
from app.write.chunking import ChunkingConfig, chunk_turn
from app.write.items import ItemResult, WriteItem
from app.write.mirror import VectorMirror
from app.write.pipeline import Hook, WriteTrack
from app.write.provenance import ROLE_TO_SOURCE
from app.write.serial import ATTEMPTS, ModelAnswers
from app.write.timing import StageClock

ROLES = ("user", "assistant", "system", "tool")
# How much of the previous turn is embedded and indexed with a turn's chunks (its end: what this turn follows).
# Measured on the LoCoMo dev file (USE embedder, turns as units): dense coverage@10 0.31 -> 0.51 with the
# previous turn as context, full-text 0.58 -> 0.67. Only a turn's first chunk takes it: what a turn follows
# belongs to its start. Without it on later chunks, LoCoMo scored the same and LongMemEval's NDCG@10 fell
# 0.894 -> 0.881 (its preference questions), for 9% less text for the embedder to read on LongMemEval.
CONTEXT_WORDS = 50


class _ContextMoved(Exception):  # noqa: N818 - control flow
    """Another append reached the session between this one's embedding and its transaction."""


@dataclass(frozen=True, slots=True)
class TurnIn:
    role: str
    content: str
    said_at: datetime


@dataclass(frozen=True, slots=True)
class TurnsResult:
    session_id: str
    turn_ids: tuple[int, ...]
    chunks: tuple[ItemResult, ...]
    reopened: bool = False  # the session was closed: these turns start its next segment


@dataclass(frozen=True, slots=True)
class CloseResult:
    session_id: str
    units: tuple[ItemResult, ...]
    summary_block_id: int | None
    summary_words: int
    thread_map: dict
    segment: int = 1  # which close of the session this was (1: its first)


class SessionTrack:
    def __init__(self, services: Services, chunking: ChunkingConfig = ChunkingConfig(), *,
                 clock: StageClock | None = None) -> None:
        self.services = services
        self.write = WriteTrack(services, clock=clock)
        self.chunking = chunking

    async def append_turns(self, vault: Vault, session_id: str, turns: Sequence[TurnIn], *,
                           hook: Hook | None = None) -> TurnsResult:
        """Archive turns and write their chunks, in one transaction under the vault's write lock. The chunks are
        embedded before it opens, with the session's last turn as read then (a chunk's context); a turn appended to
        the session meanwhile changes that context, and the chunks are embedded again."""
        self._validate(turns)
        self._within_batch_limit(turns)  # before any insert: a refused request consumes no ids
        for _ in range(ATTEMPTS):
            before = await self._last_turn(vault, session_id)
            items = self.turn_items(session_id, turns, range(len(turns)), before)
            where = [item.turn_ids[0] for item in items]  # each chunk's turn, by position
            prepared = await self.services.models.run(self.write.screen, items)

            async def work(conn: psycopg.AsyncConnection, answers: ModelAnswers,
                           before: str | None = before, where: list[int] = where,
                           prepared: list = prepared) -> TurnsResult:
                # The session's last turn and the archive's insert travel with Dedup's reads (pipelined: one
                # round trip, app/db/connector.py; Dedup reads neither), and are read after them: a session that
                # took other turns meanwhile rolls the whole transaction back, the archived turns with it.
                last = await conn.execute(Q.last_turn, (vault.id, session_id))
                archived = await send_turns(conn, vault, session_id, turns)
                if prepared:
                    await self.write.decide(vault, prepared, conn, answers=answers)
                row = await last.fetchone()
                if (row["content"] if row else None) != before:
                    raise _ContextMoved
                ids, reopened = await archived_ids(archived)
                for p in prepared:
                    p.item = replace(p.item, turn_ids=(ids[where[p.index]],))
                results = await self.write.apply(conn, vault, prepared) if prepared else []
                result = TurnsResult(session_id, tuple(ids), tuple(results), reopened=reopened)
                # The Slow Thinker predicts the next questions in the background (one queued job per session);
                # its job id is not read: it goes with COMMIT.
                await defer_prefetch(conn, vault_id=vault.id, session_id=session_id, read=False)
                if hook is not None:
                    await hook(conn, result)
                return result

            try:
                return await self.write.locked(vault, prepared, work)
            except _ContextMoved:
                continue
        raise Conflict(f"session {session_id!r} kept taking other turns while these were being written",
                       hint="nothing was written; send them again")

    async def _last_turn(self, vault: Vault, session_id: str) -> str | None:
        row = await self.services.db.fetchone(Q.last_turn, (vault.id, session_id), vault_id=vault.id)
        return row["content"] if row else None

    def turn_items(self, session_id: str, turns: Sequence[TurnIn], turn_ids: Sequence[int],
                   before: str | None) -> list[WriteItem]:
        """The chunks of ``turns`` as write-track items; ``before`` is the session's turn before them (context)."""
        previous = [before, *(t.content for t in turns[:-1])]
        return [
            WriteItem(content=chunk, said_at=t.said_at, source_kind=ROLE_TO_SOURCE[t.role], kind="chunk",
                      confidence=0.6, session_id=session_id, turn_ids=(turn_id,),
                      metadata={"role": t.role, "part": n} if n else {"role": t.role},
                      context=None if n else turn_context(prev))
            for t, turn_id, prev in zip(turns, turn_ids, previous, strict=True)
            for n, chunk in enumerate(chunk_turn(t.content, self.chunking))
        ]

    async def close(self, vault: Vault, session_id: str, *, hook: Hook | None = None,
                    mirror: VectorMirror | None = None) -> CloseResult:
        """Extract the open segment's units and summary and write them, with the session's close, in one
        transaction. ``mirror``: the bulk path's copy of the vault's vectors (app/write/mirror.py); Dedup's nearest
        blocks then come from it, decided on the close's transaction, instead of the database's probe."""
        db = self.services.db
        session = await db.fetchone(Q.session_row,
                                    (vault.id, session_id), vault_id=vault.id)
        if session is None:
            raise NotFound(f"unknown session {session_id!r} in vault {vault.name!r}",
                           hint="append turns first: POST .../sessions/{session}/turns")
        if session["turn_count"] <= session["closed_through"]:
            raise Conflict(f"session {session_id!r} is already closed", hint="append turns to it: its next close "
                           "extracts them")
        # The open segment: the turns after what earlier closes extracted (all of them at the first close).
        turns = await db.fetchall(Q.session_segment_turns,
                                  (vault.id, session_id), vault_id=vault.id)
        segment = session["segments"] + 1
        title = session_id if segment == 1 else f"{session_id} (part {segment})"
        llm, models = self.services.llm, self.services.models
        clock = self.write.clock
        t_extract = time.perf_counter()
        extract = get_task("extract_atomic_units")
        units = (await models.llm(llm, extract, extract.input_model(
            turns=[{"role": t["role"], "content": t["content"]} for t in turns]))).units if turns else []
        summarize = get_task("summarize")
        summary = (await models.llm(llm, summarize, summarize.input_model(
            mode="session", texts=[f"{t['role']}: {t['content']}" for t in turns], title=title))).summary \
            if turns else ""
        clock.add("extract", time.perf_counter() - t_extract)
        closed_at = turns[-1]["said_at"] if turns else session["last_turn_at"]
        items = [WriteItem(content=u.text, said_at=turns[u.turns[-1]]["said_at"] if u.turns else closed_at,
                           source_kind=_unit_source(turns, u.turns), kind="unit", category=u.category,
                           confidence=0.5 if u.category == "Provisional" else 0.7, session_id=session_id,
                           turn_ids=tuple(turns[i]["id"] for i in u.turns if 0 <= i < len(turns)))
                 for u in units]
        if summary:
            # Dedup compares a summary with other sessions' summaries only (a repeat is skipped, nothing merged
            # or superseded): the facts it restates are its units' to merge or supersede.
            items.insert(0, WriteItem(content=summary, said_at=closed_at, source_kind="assistant", kind="summary",
                                      category="Topic", confidence=0.6, session_id=session_id,
                                      metadata={"summary_of": session_id, "segment": segment}))
        topics = sorted({u.text for u in units if u.category == "Topic"})
        with clock("thread_map"):
            thread_map = await self._thread_map(vault, session_id, topics)
        through = turns[-1]["seq"] if turns else session["turn_count"]
        # A session's units are not a client's batch: a long session (a pasted document) may give more than a
        # request may hold (max_batch_items), and its close must not fail on that.
        limit = max(len(items), 1)
        prepared = await self.services.models.run(self.write.screen, items, max_items=limit)

        async def work(conn: psycopg.AsyncConnection, answers: ModelAnswers) -> list[ItemResult]:
            # The session's close travels with Dedup's reads (pipelined: one round trip, app/db/connector.py;
            # Dedup reads blocks, not the session) and is read after them; the apply then goes with COMMIT.
            closing = await conn.execute(Q.close_session,
                                         (vault.id, session_id, summary, json.dumps(thread_map), through))
            await self.write.decide(vault, prepared, conn, mirror, answers=answers)
            if await closing.fetchone() is None:  # a concurrent close took this segment: this one writes nothing
                raise Conflict(f"session {session_id!r} is already closed", hint="it was closed meanwhile")
            results = await self.write.apply(conn, vault, prepared)
            if hook is not None:
                await hook(conn, results)
            return results

        results = await self.write.locked(vault, prepared, work, mirror=mirror)
        self.write.mirror_written(mirror, prepared)
        first = 1 if summary else 0
        unit_results = tuple(replace(r, index=r.index - first) for r in results if r.index >= first)
        summary_block = next((r.block_id for r in results if r.index == 0), None) if summary else None
        return CloseResult(session_id, unit_results, summary_block, len(summary.split()), thread_map, segment)

    async def close_pending(self, vault: Vault, session_id: str) -> CloseResult | None:
        """Close the session's open segment, if it has one: None when every turn it has (or it has none) was
        extracted by an earlier close (the worker's idle close came first)."""
        try:
            return await self.close(vault, session_id)
        except (Conflict, NotFound):
            return None

    async def close_idle(self, idle_seconds: int) -> int:
        """Close every open session whose last turn is older than ``idle_seconds`` (all vaults)."""
        from app.vaults import get_vault

        rows = await self.services.db.fetchall(
            Q.idle_sessions, (idle_seconds,))
        for r in rows:
            try:
                await self.close(await get_vault(self.services.db, r["vault"]), r["id"])
            except Conflict:
                continue  # closed meanwhile by an API call
        return len(rows)

    async def _thread_map(self, vault: Vault, session_id: str, topics: list[str]) -> dict:
        """For each topic of this session, the earlier sessions whose topic units resemble it."""
        if not topics:
            return {"session": session_id, "threads": []}
        vectors = await self.services.models.embed_documents(self.services.embedder, topics)
        threads = []
        for topic, vec in zip(topics, vectors, strict=True):
            rows = await self.services.db.fetchall(
                Q.related_topics, (vec, vault.id, session_id, vec), vault_id=vault.id)
            threads.append({"topic": topic, "sessions": [{"session_id": r["session_id"], "topic": r["content"],
                                                          "similarity": round(float(r["cosine"]), 3)} for r in rows]})
        return {"session": session_id, "threads": threads}

    def _within_batch_limit(self, turns: Sequence[TurnIn]) -> None:
        """A request's turns, and the chunks they make (each one item of the write track), within
        ``max_batch_items``: checked before the archive's insert, not by the write track after it."""
        limit = self.services.settings.max_batch_items
        if len(turns) > limit:
            raise PayloadTooLarge(f"{len(turns)} turns in one request; the limit is {limit}",
                                  hint="send them in several requests")
        chunks = sum(len(chunk_turn(t.content, self.chunking)) for t in turns)
        if chunks > limit:
            raise PayloadTooLarge(f"these {len(turns)} turns make {chunks} chunks; the limit is {limit} per request",
                                  hint="send them in several requests")

    @staticmethod
    def _validate(turns: Sequence[TurnIn]) -> None:
        if not turns:
            raise InvalidInput("no turns given", hint="send at least one {role, content}")
        for i, t in enumerate(turns):
            if t.role not in ROLES:
                raise InvalidInput(f"turn {i}: unknown role {t.role!r}", hint=f"one of {', '.join(ROLES)}")
            if not t.content.strip():
                raise InvalidInput(f"turn {i}: content is empty")
            if "\x00" in t.content:  # no PostgreSQL text holds it
                raise InvalidInput(f"turn {i}: content contains a NUL character (\\u0000)",
                                   hint="remove it: text never needs it")
            if t.said_at.tzinfo is None:
                raise InvalidInput(f"turn {i}: said_at has no time zone", hint="use ISO-8601 with an offset or Z")


async def archive_turns(conn: psycopg.AsyncConnection, vault: Vault, session_id: str,
                        turns: Sequence[TurnIn]) -> tuple[list[int], bool]:
    """Archive turns verbatim (the session row is created on its first turn, a closed one reopens); their ids in
    order, and whether they reopened the session."""
    return await archived_ids(await send_turns(conn, vault, session_id, turns))


async def send_turns(conn: psycopg.AsyncConnection, vault: Vault, session_id: str,
                     turns: Sequence[TurnIn]) -> psycopg.AsyncCursor:
    """:func:`archive_turns`'s statement, not read yet (:func:`archived_ids` reads it)."""
    payload = [{"role": t.role, "content": t.content, "said_at": t.said_at.isoformat()} for t in turns]
    return await conn.execute(Q.append_turns, (vault.id, session_id, json.dumps(payload)))


async def archived_ids(cur: psycopg.AsyncCursor) -> tuple[list[int], bool]:
    """The archived turns' ids in order, and whether they reopened the session."""
    rows = await cur.fetchall()
    return [r["turn_id"] for r in rows], bool(rows and rows[0]["reopened"])


def turn_context(previous: str | None, words: int = CONTEXT_WORDS) -> str | None:
    """A chunk's context: the end of the turn before it in the session (what this turn answers or follows)."""
    if not previous or not previous.strip():
        return None
    said = previous.split()
    return ("… " if len(said) > words else "") + " ".join(said[-words:])


def _unit_source(turns: list[dict], indexes: list[int]) -> str:
    roles = {turns[i]["role"] for i in indexes if 0 <= i < len(turns)}
    return "user" if "user" in roles else "assistant"
