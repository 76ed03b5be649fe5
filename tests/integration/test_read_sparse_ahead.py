"""The sparse side sent ahead of the models (app/read/ahead.py, round 4 of docs/recall-cpu.md): ``sparse_ahead_v1``
returns the rankings the search's own sparse rail finds (``fast_search_v1``, now ``_sparse_side_v1`` +
``fast_search_v2``), ``recall_fast_v5`` given them returns exactly ``recall_fast_v3``'s rows, and a recall that sent
it ahead returns exactly what one that did not returns; a request that differs, or a statement that has no
connection yet, is not used. The prefetch probe that goes with it (``sparse_ahead_v2``, round 6) answers the
shortcut, a hit skipping the pipeline, each counted once; a recall the shortcut does not apply to sends none."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from app.db.connector import Database, act_as
from app.db.queries import Q
from app.read.ahead import SparseAhead
from app.read.config import RecallOptions
from app.read.pipeline import Pipeline
from app.read.prefetch import query_hash
from app.read.recall import ReadTrack
from app.safety.verdict import RULES
from tests.integration.read_helpers import Mem, put_blocks

T0 = datetime(2026, 3, 9, 12, 0, tzinfo=UTC)
MEMS = [
    Mem("Biscuit the puppy swam in Lake Tahoe with the kids", days_ago=3),
    Mem("We took Biscuit to Tahoe again, the puppy loved the cold water", days_ago=2),
    Mem("The cabin at Tahoe had a view of the whole lake", days_ago=5),
    Mem("My sister moved to Lisbon last spring", days_ago=40),
    Mem("My dentist appointment is on Friday at 3pm with Dr Lin", days_ago=1),
    Mem("Alice works at Acme Corporation as a data engineer", days_ago=9),
    Mem("The puppy chewed my left shoe, a spam offer mentioned shoes", days_ago=2, tags=["spam"]),
] + [Mem(f"Notes about the weather on day {i}, cloudy and mild near the lake", days_ago=i % 20) for i in range(30)]
QUESTIONS = ["where did Biscuit swim?", "who is my dentist?", "what did the puppy chew?", "tell me about the lake",
             "where does my sister live?", "zzz nothing matches this"]
AS_OF = T0 + timedelta(days=1)
CASES = {
    "default": {},
    "gin": {"sparse_scan": False},
    "bm25": {"sparse_bm25": True},
    "feedback": {"sparse_prf_w": 0.5},
    "few": {"sparse_n": 3},
}


async def _vault_with_memories(services, vault) -> None:
    await put_blocks(services, vault, MEMS, now=T0)
    await services.db.fetchone("SELECT memvault.refresh_lexeme_stats_v1(%s) AS n", (vault.id,), vault_id=vault.id)


def _params(services, query: str, qvec, cfg: dict, known_at=None):
    request = services.read._search.request(query, len(MEMS), 30, services.read._noise_tags, AS_OF, known_at)
    search = {**json.loads(request.search), **cfg}
    return request.query, search, (qvec, request.query, AS_OF, known_at, json.dumps(search), json.dumps({}), 30)


@pytest.mark.parametrize("case", sorted(CASES))
async def test_the_sparse_side_sent_ahead_is_the_searchs_own(services, api_services, vault, case) -> None:
    await _vault_with_memories(services, vault)
    act_as("test:ahead")
    for known_at in (None, T0):
        for question in QUESTIONS:
            qvec = await services.models.embed_query(services.embedder, question)
            text, search, params = _params(services, question, qvec, CASES[case], known_at)
            async with api_services.db.session() as conn:  # the service's login, as a recall sends it
                ahead = await (await Database.scoped(conn, vault.id, Q.sparse_ahead, (
                    text, AS_OF, known_at, json.dumps(search)))).fetchone()
                given = await (await Database.scoped(conn, vault.id, Q.recall_fast_given_scoped, (
                    qvec, AS_OF, known_at, json.dumps(search), json.dumps({}), 30, ahead["sparse"], ahead["prf"],
                    RULES))).fetchall()
                old = await (await Database.scoped(conn, vault.id, Q.recall_fast_scoped, (*params, RULES))).fetchall()
            # the search's own sparse rail: fast_search_v1's sparse ranks, in a transaction of the vault
            rows = await services.db.fetchall(
                "SELECT id, sparse_rank FROM memvault.fast_search_v1(%s, %s, %s, %s, %s::jsonb)",
                (qvec, text, AS_OF, known_at, json.dumps(search)), vault_id=vault.id)
            ranked = [r["id"] for r in sorted((r for r in rows if r["sparse_rank"] is not None),
                                              key=lambda r: r["sparse_rank"])]
            assert (ahead["sparse"] or []) == ranked, (case, question)
            assert (ahead["prf"] is not None) == (case == "feedback" and bool(ahead["prf"])), (case, question)
            assert given == old, (case, question)  # every column, in order: ids, scores, factors, read_clean
            if question.startswith("zzz"):
                assert ahead["sparse"] is None
            elif question != "tell me about the lake":
                assert ahead["sparse"], (case, question)
            plain = await services.db.fetchall(Q.recall_fast_given, (
                qvec, AS_OF, known_at, json.dumps(search), json.dumps({}), 30, ahead["sparse"], ahead["prf"]),
                vault_id=vault.id)
            assert [dict(r) for r in plain] == [{k: v for k, v in r.items() if k != "read_clean"} for r in old]


def _same(result) -> tuple:
    """The cards and the meta, but timings, the log's id and what earlier recalls' logs change: the router's sample
    count, the knowledge gap's count of recalls that found nothing."""
    meta = {k: v for k, v in result.meta.items()
            if k not in ("stage_ms", "total_ms", "recall_id", "knowledge_gap", "knowledge_gap_opened")}
    meta["router"] = {**meta["router"], "samples": None}
    return result.render(), json.dumps(meta, sort_keys=True, default=str)


async def test_a_recall_sent_ahead_equals_one_that_is_not(services, vault, monkeypatch) -> None:
    await _vault_with_memories(services, vault)
    taken: list[bool] = []
    real_take = SparseAhead.take

    async def take(self, request):
        got = await real_take(self, request)
        taken.append(got is not None)
        return got

    monkeypatch.setattr(SparseAhead, "take", take)
    without = ReadTrack(services, replace(services.read.config, sparse_ahead=False))
    with_ahead = services.read
    for thinking in ("fast", "slow"):
        for known_at in (None, T0):
            for question in QUESTIONS:
                options = RecallOptions(thinking=thinking, as_of=AS_OF, known_at=known_at, writeback=False,
                                        use_prefetch=False)
                await with_ahead.recall(vault, question, options)  # the vault's size counted: sent ahead from now
                taken.clear()
                a = await with_ahead.recall(vault, question, options)
                assert taken and taken[0], (thinking, question)  # the first search took the rankings sent ahead
                b = await without.recall(vault, question, options)
                assert _same(a) == _same(b), (thinking, known_at, question)


async def test_a_request_that_differs_is_not_taken(services, vault) -> None:
    await _vault_with_memories(services, vault)
    act_as("test:ahead")
    track = services.read
    request = track._search.request("where did Biscuit swim?", len(MEMS), 30, track._noise_tags, AS_OF, None)
    ahead = SparseAhead.start(services.db, vault.id, request)
    await asyncio.wait([ahead.task])  # its rows are in
    other = replace(request, query="where did the puppy swim?")
    assert await ahead.take(other) is None
    assert await ahead.take(replace(request, as_of=None)) is None
    assert await ahead.take(replace(request, search=request.search.replace('"sparse_n": 60', '"sparse_n": 61'))) \
        is None
    got = await ahead.take(request)
    assert got is not None and got[0]
    await ahead.settle()


async def test_one_without_a_connection_yet_is_cancelled_and_the_pool_keeps_its_connections(services,
                                                                                           vault) -> None:
    await _vault_with_memories(services, vault)
    track = services.read
    request = track._search.request("where did Biscuit swim?", len(MEMS), 30, track._noise_tags, AS_OF, None)
    before = services.db.pool.get_stats()
    for _ in range(5):
        ahead = SparseAhead.start(services.db, vault.id, request)
        assert not ahead.sent  # the task has not run yet: it has no connection
        assert await ahead.take(request) is None
        await ahead.settle()
        assert ahead.task.cancelled()
    stats = services.db.pool.get_stats()
    assert stats["pool_size"] == before["pool_size"] and stats.get("requests_waiting", 0) == 0
    async with services.db.session():  # a connection is still lent
        pass


async def test_nothing_is_sent_ahead_before_the_vault_is_counted(services, vault) -> None:
    """The request needs the vault's size (``services.vault_sizes``, counted by the search once a minute): the
    first recall of a vault sends nothing ahead, the next one does."""
    await _vault_with_memories(services, vault)
    services.vault_sizes.forget()
    track = services.read
    options = RecallOptions(thinking="fast", as_of=AS_OF, use_prefetch=False)
    assert track._ahead(vault, "who is my dentist?", options, 10) is None
    first = await track.recall(vault, "who is my dentist?", options)
    ahead = track._ahead(vault, "who is my dentist?", options, 10)
    assert ahead is not None
    await ahead.settle()
    second = await track.recall(vault, "who is my dentist?", options)
    assert first.ids == second.ids


async def _prefetched(services, vault, query: str) -> None:
    """The Slow Thinker's cached answer for ``query``: one candidate, id 1."""
    cand = {"id": 1, "score": 0.9, "base": 0.9, "cosine": 0.8, "text": "Dr Lin on Friday", "content": "Dr Lin"}
    payload = {"session_id": "s", "intent": "factual", "mode": "LOCAL", "thinking": "fast", "candidates": [cand],
               "sanitize_hits": 0}
    await services.db.fetchone(Q.prefetch_put, (query_hash(query), query, json.dumps(payload), 0.9, 300),
                               vault_id=vault.id)


def _spy(monkeypatch, cls, name: str) -> list:
    """Calls of ``cls.name`` recorded: (args, result)."""
    seen: list = []
    real = getattr(cls, name)

    async def spy(self, *args, **kwargs):
        got = await real(self, *args, **kwargs)
        seen.append((args, got))
        return got

    monkeypatch.setattr(cls, name, spy)
    return seen


async def test_the_probe_sent_with_the_sparse_side_answers_the_shortcut(services, vault, monkeypatch) -> None:
    """A prefetched answer (the Slow Thinker's cache) found by the probe that went with the sparse side: the
    pipeline is skipped, the hit counted once; a miss answered by the same statement, counted once, and the
    pipeline runs."""
    await _vault_with_memories(services, vault)
    await _prefetched(services, vault, "who is my dentist?")
    track = services.read
    counters = services.read_counters
    await track.recall(vault, "where did Biscuit swim?")  # the vault's size counted: sent ahead from now
    probed = _spy(monkeypatch, SparseAhead, "probed")
    piped = _spy(monkeypatch, Pipeline, "run")
    hits, misses = counters.get(vault.id, "prefetch.hit"), counters.get(vault.id, "prefetch.miss")
    hit = await track.recall(vault, "who is my dentist?")
    assert hit.meta["prefetch_hit"] and hit.ids == [1]
    assert piped == []  # the hit skipped the pipeline
    assert counters.get(vault.id, "prefetch.hit") == hits + 1
    assert counters.get(vault.id, "prefetch.miss") == misses
    miss = await track.recall(vault, "what did the puppy chew?")
    assert not miss.meta["prefetch_hit"] and miss.ids
    assert len(piped) == 1  # the miss ran it
    assert counters.get(vault.id, "prefetch.hit") == hits + 1
    assert counters.get(vault.id, "prefetch.miss") == misses + 1
    assert [args for args, _ in probed] == [(query_hash("who is my dentist?"),),
                                            (query_hash("what did the puppy chew?"),)]
    assert probed[0][1] is not None and probed[0][1][0]["query"] == "who is my dentist?"  # the hit's row came along
    assert probed[1][1] == (None,)  # the miss: answered by the same statement, no row


async def test_a_recall_the_shortcut_does_not_apply_to_sends_no_probe(services, vault, monkeypatch) -> None:
    """A time given, a thinking mode given, or use_prefetch off: the shortcut does not apply, the sparse side goes
    without the probe (sparse_ahead_v1), and the cached answer is neither read nor counted."""
    await _vault_with_memories(services, vault)
    await _prefetched(services, vault, "who is my dentist?")
    track = services.read
    counters = services.read_counters
    await track.recall(vault, "where did Biscuit swim?")  # the vault's size counted
    default = track._ahead(vault, "who is my dentist?", RecallOptions(), 10)
    assert default is not None and default.probe == query_hash("who is my dentist?")
    await default.settle()
    started = _spy(monkeypatch, SparseAhead, "_run")
    piped = _spy(monkeypatch, Pipeline, "run")
    hits, misses = counters.get(vault.id, "prefetch.hit"), counters.get(vault.id, "prefetch.miss")
    for options in (RecallOptions(as_of=AS_OF), RecallOptions(thinking="fast"), RecallOptions(use_prefetch=False)):
        started.clear()
        piped.clear()
        result = await track.recall(vault, "who is my dentist?", options)
        assert not result.meta["prefetch_hit"] and len(piped) == 1, options  # the pipeline answered
        assert len(started) == 1, options  # the sparse side went ahead ...
        assert started[0][1].probed is False and started[0][1].prefetch is None, options  # ... with no probe
    assert counters.get(vault.id, "prefetch.hit") == hits
    assert counters.get(vault.id, "prefetch.miss") == misses
