"""The dense side sent ahead of the classifier (app/read/ahead.py, round 6 of docs/recall-cpu.md): ``dense_ahead_v1``
returns the ids in the order of the search's own dense rail (``fast_search_v1``'s ``dense_rank``), exact in a small
vault and through the vault's own HNSW index; ``recall_fast_v7`` given both sides returns exactly
``recall_fast_v3``'s rows; a recall that sent it ahead returns exactly what one that did not returns; a request that
differs, or a statement without a connection yet, is not used; nothing is sent when a rail the classifier's choice
decides may run; and the prefetch probe sent with the sparse side answers the shortcut, its counters right."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from datetime import timedelta

import numpy as np
import pytest

from app.db import ann_index
from app.db.connector import Database, act_as
from app.db.queries import Q
from app.read.ahead import DenseAhead, DenseRequest, SparseAhead
from app.read.config import RecallOptions
from app.read.prefetch import query_hash
from app.read.recall import ReadTrack
from app.safety.verdict import RULES
from tests.integration.read_helpers import put_blocks
from tests.integration.test_read_sparse_ahead import MEMS, QUESTIONS, T0, _same
from tests.integration.test_read_unit_of_work import _pool_of

AS_OF = T0 + timedelta(days=1)
CASES = {
    "exact": {},
    "few": {"dense_n": 3},
    "no noise filter": {"noise_tags": []},  # the spam-tagged memory may come back
    "ann": {"exact": False},  # the vault's own HNSW index (built in the test)
}


async def _vault_with_memories(services, vault, *, index: bool = False) -> None:
    await put_blocks(services, vault, MEMS, now=T0)
    await services.db.fetchone("SELECT memvault.refresh_lexeme_stats_v1(%s) AS n", (vault.id,), vault_id=vault.id)
    if index:
        await ann_index.apply(services.db, min_blocks=10, vault_id=vault.id, concurrently=False)
        assert await ann_index.has_index(services.db, vault.id)


def _dense(services) -> ReadTrack:
    """The read track with the dense side sent ahead (``ReadConfig.dense_ahead``, off by default)."""
    return ReadTrack(services, replace(services.read.config, dense_ahead=True), shortcut=services.read.shortcut)


def _search(services, query: str, cfg: dict, known_at) -> tuple[str, str]:
    request = services.read._search.request(query, len(MEMS), 30, services.read._noise_tags, AS_OF, known_at)
    return request.query, json.dumps({**json.loads(request.search), **cfg})


@pytest.mark.parametrize("case", sorted(CASES))
async def test_the_dense_side_sent_ahead_is_the_searchs_own(services, api_services, vault, case) -> None:
    await _vault_with_memories(services, vault, index=case == "ann")
    act_as("test:dense")
    for as_of in (None, AS_OF):
        for known_at in (None, T0):
            for question in QUESTIONS:
                qvec = await services.models.embed_query(services.embedder, question)
                text, search = _search(services, question, CASES[case], known_at)
                async with api_services.db.session() as conn:  # the service's login, as a recall sends it
                    dense = (await (await Database.scoped(conn, vault.id, Q.dense_ahead, (
                        qvec, as_of, known_at, search))).fetchone())["dense"]
                    sparse = await (await Database.scoped(conn, vault.id, Q.sparse_ahead, (
                        text, as_of, known_at, search))).fetchone()
                    both = (qvec, as_of, known_at, search, json.dumps({}), 30, sparse["sparse"], sparse["prf"], dense)
                    given = await (await Database.scoped(conn, vault.id, Q.recall_fast_both_given_scoped, (
                        *both, RULES))).fetchall()
                    old = await (await Database.scoped(conn, vault.id, Q.recall_fast_scoped, (
                        qvec, text, as_of, known_at, search, json.dumps({}), 30, RULES))).fetchall()
                # the search's own dense rail: fast_search_v1's dense ranks, in a transaction of the vault
                rows = await services.db.fetchall(
                    "SELECT id, dense_rank FROM memvault.fast_search_v1(%s, %s, %s, %s, %s::jsonb)",
                    (qvec, text, as_of, known_at, search), vault_id=vault.id)
                ranked = [r["id"] for r in sorted((r for r in rows if r["dense_rank"] is not None),
                                                  key=lambda r: r["dense_rank"])]
                assert dense == ranked and dense, (case, question, as_of, known_at)
                n = json.loads(search)["dense_n"] * (2 if known_at else 1)
                assert len(dense) == min(n, len(MEMS) - (0 if case == "no noise filter" else 1))
                if as_of is None:  # each statement's now(): the decay's scores move by a few ulps between them
                    assert [(r["id"], r["dense_rank"], r["sparse_rank"]) for r in given] == \
                        [(r["id"], r["dense_rank"], r["sparse_rank"]) for r in old], (case, question)
                    continue
                assert given == old, (case, question)  # every column, in order: ids, scores, factors, read_clean
                plain = await services.db.fetchall(Q.recall_fast_both_given, both, vault_id=vault.id)
                assert [dict(r) for r in plain] == [{k: v for k, v in r.items() if k != "read_clean"}
                                                    for r in old]
    if case == "ann":  # the index's settings lasted as long as the statement's transaction
        async with api_services.db.session() as conn:
            row = await (await conn.execute("SELECT current_setting('hnsw.iterative_scan', true) AS s")).fetchone()
        assert row["s"] in (None, "", "off")


async def test_a_recall_sent_ahead_equals_one_that_is_not(services, vault, monkeypatch) -> None:
    await _vault_with_memories(services, vault)
    taken: list[bool] = []
    real_take = DenseAhead.take

    async def take(self, request):
        got = await real_take(self, request)
        taken.append(got is not None)
        return got

    monkeypatch.setattr(DenseAhead, "take", take)
    await _pool_of(services.db, 4)
    without = ReadTrack(services, replace(services.read.config, sparse_ahead=False))
    sparse_only = services.read
    with_ahead = _dense(services)
    for known_at in (None, T0):
        for question in QUESTIONS:
            options = RecallOptions(thinking="fast", as_of=AS_OF, known_at=known_at, writeback=False,
                                    use_prefetch=False)
            await with_ahead.recall(vault, question, options)  # the vault's size counted
            taken.clear()
            a = await with_ahead.recall(vault, question, options)
            assert taken == [True], (question, known_at)  # the search took the dense rail sent ahead
            b = await without.recall(vault, question, options)
            c = await sparse_only.recall(vault, question, options)
            assert _same(a) == _same(b) == _same(c), (known_at, question)


async def test_a_request_that_differs_is_not_taken(services, vault) -> None:
    await _vault_with_memories(services, vault)
    act_as("test:dense")
    qvec = await services.models.embed_query(services.embedder, "where did Biscuit swim?")
    _, search = _search(services, "where did Biscuit swim?", {}, None)
    request = DenseRequest(qvec, AS_OF, None, search)
    ahead = DenseAhead.start(services.db, vault.id, request)
    await asyncio.wait([ahead.task])  # its row is in
    other = await services.models.embed_query(services.embedder, "where did the puppy swim?")
    assert await ahead.take(replace(request, qvec=other)) is None
    assert await ahead.take(replace(request, as_of=None)) is None
    assert await ahead.take(replace(request, known_at=T0)) is None
    assert await ahead.take(replace(request, search=search.replace('"dense_n": 60', '"dense_n": 61'))) is None
    got = await ahead.take(replace(request, qvec=np.array(qvec, copy=True)))  # the same vector, another array
    assert got
    await ahead.settle()


async def test_one_without_a_connection_yet_is_cancelled_and_the_pool_keeps_its_connections(services,
                                                                                           vault) -> None:
    await _vault_with_memories(services, vault)
    qvec = await services.models.embed_query(services.embedder, "where did Biscuit swim?")
    request = DenseRequest(qvec, AS_OF, None, _search(services, "where did Biscuit swim?", {}, None)[1])
    before = services.db.pool.get_stats()
    for _ in range(5):
        ahead = DenseAhead.start(services.db, vault.id, request)
        assert not ahead.sent  # the task has not run yet: it has no connection
        assert await ahead.take(request) is None
        await ahead.settle()
        assert ahead.task.cancelled()
    stats = services.db.pool.get_stats()
    assert stats["pool_size"] == before["pool_size"] and stats.get("requests_waiting", 0) == 0
    async with services.db.session():  # a connection is still lent
        pass


async def test_nothing_dense_is_sent_when_the_classifier_may_add_a_rail(services, vault) -> None:
    """The focus rail (focus_dense_w > 0) and the second rail (a model configured, the thinking mode given or
    not yet known, and rail2 on for it) change the search's keys: nothing dense is sent ahead then, nor without
    the sparse side or with the switch off."""
    await _vault_with_memories(services, vault)
    track = _dense(services)
    qvec = await services.models.embed_query(services.embedder, "who is my dentist?")
    options = RecallOptions(thinking="fast", as_of=AS_OF, use_prefetch=False)
    sparse = track._ahead(vault, "who is my dentist?", options, 10)  # the vault's size is counted by now
    if sparse is None:
        await track.recall(vault, "who is my dentist?", options)
        sparse = track._ahead(vault, "who is my dentist?", options, 10)
    try:
        sent = track._dense_ahead(vault, "who is my dentist?", options, qvec, sparse)
        assert sent is not None
        await sent.settle()
        assert track._dense_ahead(vault, "who is my dentist?", options, qvec, None) is None
        off = services.read  # the default: off
        assert off._dense_ahead(vault, "who is my dentist?", options, qvec, sparse) is None
        focus = ReadTrack(services, replace(track.config, search=replace(track.config.search, focus_dense_w=0.3)))
        assert focus._dense_ahead(vault, "who is my dentist?", options, qvec, sparse) is None
        services_rail2 = services.rail2
        try:
            services.rail2 = object()  # a second model configured: the slow path's search uses it
            assert track._dense_ahead(vault, "who is my dentist?", replace(options, thinking="slow"), qvec,
                                      sparse) is None
            assert track._dense_ahead(vault, "who is my dentist?", replace(options, thinking=None), qvec,
                                      sparse) is None  # the profile may choose slow
            fast = track._dense_ahead(vault, "who is my dentist?", options, qvec, sparse)
            assert fast is not None
            await fast.settle()
        finally:
            services.rail2 = services_rail2
    finally:
        await sparse.settle()


async def test_the_probe_sent_with_the_sparse_side_answers_the_shortcut(services, vault) -> None:
    """A prefetched answer (the Slow Thinker's cache) found by the probe that went with the sparse side: the
    pipeline is skipped as before, the hit counted once; a miss counted once too."""
    await _vault_with_memories(services, vault)
    track = services.read
    counters = services.read_counters
    cand = {"id": 1, "score": 0.9, "base": 0.9, "cosine": 0.8, "text": "Dr Lin on Friday", "content": "Dr Lin"}
    payload = {"session_id": "s", "intent": "factual", "mode": "LOCAL", "thinking": "fast", "candidates": [cand],
               "sanitize_hits": 0}
    await services.db.fetchone(Q.prefetch_put, (query_hash("who is my dentist?"), "who is my dentist?",
                                                json.dumps(payload), 0.9, 300), vault_id=vault.id)
    await track.recall(vault, "where did Biscuit swim?")  # the vault's size counted: sent ahead from now
    probed: list[object] = []
    real = SparseAhead.probed

    async def spy(self, probe):
        got = await real(self, probe)
        probed.append(got)
        return got

    SparseAhead.probed = spy
    try:
        hits, misses = counters.get(vault.id, "prefetch.hit"), counters.get(vault.id, "prefetch.miss")
        hit = await track.recall(vault, "who is my dentist?")
        miss = await track.recall(vault, "what did the puppy chew?")
    finally:
        SparseAhead.probed = real
    assert hit.meta["prefetch_hit"] and hit.ids == [1]
    assert not miss.meta["prefetch_hit"]
    assert len(probed) == 2 and probed[0] is not None and probed[0][0] is not None  # the hit's row came with it
    assert probed[1] == (None,)  # the miss: answered by the same statement, no row
    assert counters.get(vault.id, "prefetch.hit") == hits + 1
    assert counters.get(vault.id, "prefetch.miss") == misses + 1
