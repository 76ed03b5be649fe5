"""PostgreSQL going away in the middle of writes (a loopback proxy between the service and the shared cluster is
cut; the cluster itself is never touched): the API answers 503 with Retry-After, recovers by itself, and every
write is either acknowledged and present afterwards, or refused."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from urllib.parse import urlsplit

import psycopg
import pytest

from app.services import Services
from tests.fakes.tcp_proxy import TcpProxy

PEOPLE = ["Anna", "Bruno", "Chen", "Dalia", "Emeka", "Freya", "Goran", "Hana"]
THINGS = ["a red kayak", "a sourdough starter", "a vintage camera", "a bonsai tree", "a chess clock",
          "a telescope", "an espresso machine", "a road bike", "a violin", "a sewing machine"]
CITIES = ["Lisbon", "Tainan", "Oslo", "Quito", "Nairobi", "Porto", "Kyoto", "Tallinn", "Accra"]


def sentence(i: int) -> str:
    return (f"{PEOPLE[i % 8]} bought {THINGS[(i // 8) % 10]} in {CITIES[(i // 80) % 9]} "
            f"for {17 + 13 * i} euros on order number {100000 + 7919 * i}.")


@pytest.fixture
def proxy(db_url: str):
    parts = urlsplit(db_url)
    with TcpProxy(parts.hostname or "127.0.0.1", parts.port or 5432) as p:
        yield p


@pytest.fixture
async def services(service_db_url: str, test_settings, proxy: TcpProxy):
    """The service reaches PostgreSQL only through the proxy (overrides conftest's ``services``)."""
    svc = await Services.start(test_settings.model_copy(update={"pool_timeout_s": 2.0}), url=proxy.rewrite(service_db_url))
    try:
        yield svc
    finally:
        await svc.close()


@pytest.fixture
def api_services(services):
    """The API on the same proxied pool (overrides conftest's ``api_services``)."""
    return services


async def test_outage_is_503_with_retry_after_and_no_acknowledged_write_is_lost(client, proxy: TcpProxy,
                                                                                 db_url: str) -> None:
    assert (await client.post("/v1/vaults", json={"name": "w"})).status_code == 201
    acked: dict[str, int] = {}
    refused: list[str] = []
    statuses: Counter[int] = Counter()
    phase = {"outage_over_at": None}

    async def write(i: int) -> None:
        key = f"write-{i}"
        r = await client.post("/v1/vaults/w/memories", json={"content": sentence(i)},
                              headers={"Idempotency-Key": key})
        statuses[r.status_code] += 1
        if r.status_code == 200:
            acked[key] = r.json()["results"][0]["block_id"]
        else:
            assert r.status_code == 503, r.text
            assert int(r.headers["retry-after"]) >= 1 and r.json()["error"] == "DatabaseUnavailable"
            refused.append(key)

    i = 0
    start = time.monotonic()
    cut_at, restore_at = 1.0, 4.0
    while True:
        now = time.monotonic() - start
        if proxy.up and cut_at <= now < restore_at:
            proxy.cut()
        elif not proxy.up and now >= restore_at:
            proxy.restore()
            phase["outage_over_at"] = i
        await write(i)
        i += 1
        after = i - (phase["outage_over_at"] or i)
        if phase["outage_over_at"] is not None and (after >= 15 or now > 40):
            break
        await asyncio.sleep(0.02)

    assert refused, f"the outage refused no write: {statuses}"
    assert statuses[200] and not set(statuses) - {200, 503}, statuses  # refused at once while it is away
    recovered = [k for k in acked if int(k.split("-")[1]) >= phase["outage_over_at"]]
    assert recovered, "the service did not recover by itself"

    with psycopg.connect(db_url) as conn:  # straight to the database, not through the proxy
        stored = dict(conn.execute("SELECT key, (response->'results'->0->>'block_id')::bigint "
                                   "FROM memvault.idempotency_key").fetchall())
        blocks = {r[0] for r in conn.execute("SELECT id FROM memvault.block").fetchall()}
    assert all(stored.get(k) == b and b in blocks for k, b in acked.items()), "an acknowledged write is missing"
    committed_unacked = [k for k in refused if k in stored]
    # Retrying the refused writes with their keys writes each exactly once (or replays the committed answer).
    for key in refused:
        r = await client.post("/v1/vaults/w/memories", json={"content": sentence(int(key.split("-")[1]))},
                              headers={"Idempotency-Key": key})
        assert r.status_code == 200
        if key in stored:
            assert r.json()["results"][0]["block_id"] == stored[key]
    with psycopg.connect(db_url) as conn:
        n_keys = conn.execute("SELECT count(*) FROM memvault.idempotency_key").fetchone()[0]
    assert n_keys == i
    print(f"writes: {i}, acknowledged {len(acked)}, refused {len(refused)} "
          f"({len(committed_unacked)} of them had committed), statuses {dict(statuses)}")
