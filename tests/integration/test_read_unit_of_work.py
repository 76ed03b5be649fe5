"""A recall is one unit of work (issue 33, item 3): one vault transaction for the prefetch probe, the pipeline and
the recall log; the round trips to PostgreSQL of one recall are counted."""

from __future__ import annotations

from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
from psycopg import pq

from app.write.items import WriteItem
from tests.integration.served import served

T0 = datetime(2026, 3, 9, 12, 0, tzinfo=UTC)
FACTS = ["I live in Taipei", "My dentist appointment is on Friday at 3pm", "I like green tea with jasmine",
         "My favourite editor is Vim", "Alice works at Acme Corporation as a data engineer",
         "We decided to ship the beta on the first of April"]


@asynccontextmanager
async def round_trips(db, tmp_path):
    """The round trips to the server of every connection ``db`` lends while the block runs, read from libpq's own
    trace of the protocol: a round trip is the client sending (F messages) and then waiting for the server's
    answer (B messages). Pipelined statements sent together are one. Yields a list filled when the block ends."""
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
        sides = [line.split("\t", 1)[0] for line in path.read_text().splitlines() if line[:1] in "FB"]
        seen.append(sum(1 for a, b in zip(sides, sides[1:]) if a == "F" and b == "B"))


async def _filled(services, vault) -> None:
    await services.write.remember(vault, [WriteItem(content=t, said_at=T0 + timedelta(hours=i))
                                          for i, t in enumerate(FACTS)])


async def test_round_trips_of_one_fast_recall(services, vault, tmp_path) -> None:
    await _filled(services, vault)
    track = services.read
    await track.recall(vault, "where do I live?")  # warm: archetypes, vault size, router
    await track.drain()
    async with round_trips(services.db, tmp_path) as seen:
        result = await track.recall(vault, "when is my dentist appointment?")
        await track.drain()
    assert result.cards
    print(f"\nround trips per recall: {sum(seen)} (per checkout: {seen})")
    # The recall's unit (BEGIN + scope + probe, the search, the log with its write-back + COMMIT); the write-back
    # had a transaction of its own until the recall CPU work (BEGIN + scope + touch + COMMIT: [3, 1]). Before
    # issue 33: four transactions of four round trips each, 16.
    assert seen == [3]


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
    """The whole request: the key's lookup, the vault's (the ``v`` dependency, once), the recall's unit (its
    write-back with its log). Before issue 33: 23 in six transactions (the key's lookup 3, five of 4)."""
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
    assert seen == [1, 1, 3]
