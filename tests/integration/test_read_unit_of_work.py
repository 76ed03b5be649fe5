"""A recall is one unit of work (issue 33, item 3): one pooled connection for the prefetch probe, the pipeline and
the recall log, each a statement that scopes itself to the vault (app/read/unit.py); the round trips to PostgreSQL
of one recall, and the statements it sends, are counted."""

from __future__ import annotations

import re
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
from psycopg import pq

from app.write.items import WriteItem
from tests.integration.served import served

T0 = datetime(2026, 3, 9, 12, 0, tzinfo=UTC)
FUNCTION = re.compile(r"memvault\.(\w+)\(")
FACTS = ["I live in Taipei", "My dentist appointment is on Friday at 3pm", "I like green tea with jasmine",
         "My favourite editor is Vim", "Alice works at Acme Corporation as a data engineer",
         "We decided to ship the beta on the first of April"]


@asynccontextmanager
async def round_trips(db, tmp_path, statements: list[int] | None = None, called: list[list[str]] | None = None):
    """The round trips to the server of every connection ``db`` lends while the block runs, read from libpq's own
    trace of the protocol: a round trip is the client sending (F messages) and then waiting for the server's
    answer (B messages). Pipelined statements sent together are one. Yields a list filled when the block ends;
    ``statements``, if given, is filled with the statements each connection sent (Execute or Query messages:
    BEGIN, a set_config, a function call, COMMIT are one each); ``called``, with the first memvault function each
    statement names (Parse or Query messages), per connection."""
    seen: list[int] = []
    real = db.pool.connection
    traces: list[Path] = []

    @asynccontextmanager
    async def traced(*args, **kwargs):
        async with real(*args, **kwargs) as conn:
            path = tmp_path / f"trace-{len(traces)}.txt"
            traces.append(path)
            with path.open("w") as f:
                conn.pgconn.trace(f.fileno())
                conn.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS)
                try:
                    yield conn
                finally:
                    conn.pgconn.untrace()

    db.pool.connection = traced
    try:
        yield seen
    finally:
        db.pool.connection = real
    for path in traces:
        lines = [line.split("\t") for line in path.read_text().splitlines() if line[:1] in "FB"]
        sides = [line[0] for line in lines]
        seen.append(sum(1 for a, b in zip(sides, sides[1:]) if a == "F" and b == "B"))
        if statements is not None:
            statements.append(sum(1 for line in lines if line[0] == "F" and len(line) > 2
                                  and line[2] in ("Execute", "Query")))
        if called is not None:
            called.append([m.group(1) for line in lines if line[0] == "F" and len(line) > 3
                           and line[2] in ("Parse", "Query") and (m := FUNCTION.search(line[3]))])


async def _filled(services, vault) -> None:
    await services.write.remember(vault, [WriteItem(content=t, said_at=T0 + timedelta(hours=i))
                                          for i, t in enumerate(FACTS)])


async def test_round_trips_of_one_fast_recall(services, vault, tmp_path) -> None:
    await _filled(services, vault)
    track = services.read
    await track.recall(vault, "where do I live?")  # warm: archetypes, vault size, router
    await track.drain()
    statements: list[int] = []
    called: list[list[str]] = []
    async with round_trips(services.db, tmp_path, statements, called) as seen:
        result = await track.recall(vault, "when is my dentist appointment?")
        await track.drain()
    assert result.cards
    print(f"\nround trips per recall: {sum(seen)} (per checkout: {seen}), statements: {statements}, {called}")
    # The sparse rail sent ahead of the models on a checkout of its own, with the prefetch probe in the same
    # statement (sparse_ahead_v2: rounds 4 and 6 of docs/recall-cpu.md), then the recall's unit: the search given
    # the sparse side, the log with its write-back, each one statement that scopes itself (recall_fast_v5,
    # record_recall_v2), one round trip each: three round trips, three statements. Round 4: [1, 3] (the probe in
    # the unit, prefetch_get_v2); before it: [3] (the search ran the sparse rail itself, recall_fast_v3); until
    # round 3 the same three round trips carried six statements (BEGIN, the scope's set_config, the probe; the
    # search; the log, COMMIT: [6]), and the write-back had a transaction of its own before that ([3, 1]). Before
    # issue 33: four transactions of four round trips each, 16.
    # (in the order the checkouts were taken: the early statement's first, unless the models answered without
    # yielding to the loop, when the search would find it without a connection and run the rail itself)
    assert seen == [1, 2]
    assert statements == [1, 2]
    assert called == [["sparse_ahead_v2"], ["recall_fast_v5", "record_recall_v2"]]


async def test_round_trips_of_one_fast_recall_not_sent_ahead(services, vault, tmp_path) -> None:
    """``ReadConfig.sparse_ahead`` off: the unit alone, the search running the sparse rail itself (round 3)."""
    from dataclasses import replace

    from app.read.recall import ReadTrack

    await _filled(services, vault)
    track = ReadTrack(services, replace(services.read.config, sparse_ahead=False), shortcut=services.read.shortcut)
    await track.recall(vault, "where do I live?")  # warm
    statements: list[int] = []
    called: list[list[str]] = []
    async with round_trips(services.db, tmp_path, statements, called) as seen:
        result = await track.recall(vault, "when is my dentist appointment?")
    assert result.cards
    assert seen == [3] and statements == [3]
    assert called == [["prefetch_get_v2", "recall_fast_v3", "record_recall_v2"]]


async def test_round_trips_of_one_fast_recall_without_the_probe(services, vault, tmp_path) -> None:
    """A recall that skips the prefetch probe (a time given, as the benchmarks ask): the sparse side sent ahead,
    then two statements, the search and the log, no transaction statement at all (before round 3: BEGIN, scope,
    search; log, COMMIT: 5)."""
    from app.read.config import RecallOptions

    await _filled(services, vault)
    track = services.read
    options = RecallOptions(thinking="fast", use_prefetch=False, as_of=T0 + timedelta(days=1))
    await track.recall(vault, "where do I live?", options)  # warm
    statements: list[int] = []
    called: list[list[str]] = []
    async with round_trips(services.db, tmp_path, statements, called) as seen:
        result = await track.recall(vault, "when is my dentist appointment?", options)
    assert result.cards
    # the sparse side sent ahead (round 4), then the search given it and the log: [2] before round 4
    assert seen == [1, 2] and statements == [1, 2]
    assert called == [["sparse_ahead_v1"], ["recall_fast_v5", "record_recall_v2"]]


async def test_the_write_back_is_committed_with_the_log(services, vault) -> None:
    """The returned blocks' access counts are written in the recall's own transaction: committed when recall
    returns, nothing left pending; with ``writeback=False`` nothing is counted, and the log is still written."""
    from app.read.config import RecallOptions

    await _filled(services, vault)
    track = services.read
    usage = "SELECT coalesce(sum(access_count), 0)::int AS n FROM memvault.block_usage"
    result = await track.recall(vault, "when is my dentist appointment?")
    assert not track._pending  # no write-back task of its own
    counted = (await services.db.fetchone(usage, vault_id=vault.id))["n"]
    assert result.ids and counted == len(result.ids)
    logs = "SELECT count(*)::int AS n FROM memvault.recall_log"
    before = (await services.db.fetchone(logs, vault_id=vault.id))["n"]
    await track.recall(vault, "when is my dentist appointment?", RecallOptions(writeback=False))
    assert (await services.db.fetchone(usage, vault_id=vault.id))["n"] == counted
    assert (await services.db.fetchone(logs, vault_id=vault.id))["n"] == before + 1


async def test_round_trips_of_one_recall_over_http(api_services, admin_key, tmp_path) -> None:
    """The whole request: the key's lookup, the vault's (the ``v`` dependency, once), the sparse side sent ahead
    with the prefetch probe (rounds 4 and 6 of docs/recall-cpu.md), the recall's unit (the search, the log with
    its write-back). Round 4: [1, 1, 1, 3]; before it: [1, 1, 3]; before issue 33: 23 in six transactions (the
    key's lookup 3, five of 4)."""
    async with served(api_services) as url, httpx.AsyncClient(
            base_url=url, headers={"Authorization": f"Bearer {admin_key}"}, timeout=30) as http:
        assert (await http.post("/v1/vaults", json={"name": "alice"})).status_code == 201
        body = {"items": [{"content": t} for t in FACTS]}
        assert (await http.post("/v1/vaults/alice/memories", json=body)).status_code == 200
        assert (await http.post("/v1/vaults/alice/recall", json={"query": "where do I live?"})).status_code == 200
        await api_services.read.drain()
        async with round_trips(api_services.db, tmp_path) as seen:
            r = await http.post("/v1/vaults/alice/recall", json={"query": "when is my dentist appointment?"})
            await api_services.read.drain()
    assert r.status_code == 200 and r.json()["cards"]
    print(f"\nround trips per HTTP recall: {sum(seen)} (per checkout: {seen})")
    assert seen == [1, 1, 1, 2]
