"""`memvault serve` outlives its database: a PostgreSQL of the test's own (tests/own_cluster.py, never the shared
one) is restarted (`pg_ctl restart -m fast`), crashed (`stop -m immediate`, then started: crash recovery) or stopped
for a while, under concurrent writes that each queue jobs. The serve process never exits; during the fault clients
get 503 with Retry-After (nothing else); every acknowledged write is in the database afterwards and a refused one
retried with its Idempotency-Key is written once; every job succeeds, and only a job the fault cut in the middle
runs a second time; /health says 200 again within seconds of the server's return.

The outage's length is MEMVAULT_TEST_OUTAGE_S (3 s in the suite; the 60-second case is the same test with 60).
The crash case runs `serve --workers 2`, whose job worker is the standalone `memvault worker` process."""

from __future__ import annotations

import asyncio
import os
import time
from collections import Counter
from pathlib import Path

import httpx
import psycopg
import pytest

from app.bench.runtime import serve_process
from tests.fakes.live_server import mcp_http
from tests.own_cluster import OwnCluster, own_cluster

OUTAGE_S = float(os.environ.get("MEMVAULT_TEST_OUTAGE_S", "3"))
WRITERS = 4
AFTER = 6  # acknowledged writes per writer after the server is back


@pytest.fixture(scope="module")
def cluster(test_settings, tmp_path_factory) -> OwnCluster:
    with own_cluster(test_settings, tmp_path_factory.mktemp("restart")) as c:
        yield c


def admin_key(cluster: OwnCluster, material: tuple[str, str, str]) -> str:
    """The session's admin key, in the cluster's database (once)."""
    key_id, key, key_hash = material
    with psycopg.connect(cluster.url, autocommit=True) as conn:
        conn.execute("SELECT * FROM memvault.api_key_create_v1(%s, %s, 'admin', NULL, 'restart') "
                     "WHERE NOT EXISTS (SELECT 1 FROM memvault.api_key WHERE id = %s)", (key_id, key_hash, key_id))
    return key


def fault(cluster: OwnCluster, kind: str) -> None:
    if kind == "restart":
        cluster.pg_ctl("-m", "fast", "restart")
    elif kind == "crash":
        cluster.pg_ctl("-m", "immediate", "stop")
        cluster.pg_ctl("start")
    else:
        cluster.pg_ctl("-m", "fast", "stop")
        time.sleep(OUTAGE_S)
        cluster.pg_ctl("start")


def sentence(kind: str, i: int) -> str:
    return f"In the {kind} drill, courier {i} delivered parcel {7919 * i + 13} to dock {i % 17} at {i % 24}:00."


async def wait_healthy(http: httpx.AsyncClient, server, log: Path, within: float) -> float:
    start = time.monotonic()
    while True:
        assert server.poll() is None, f"memvault serve exited:\n{log.read_text()[-4000:]}"
        assert time.monotonic() - start < within, f"/health not 200 within {within} s:\n{log.read_text()[-4000:]}"
        try:
            if (await http.get("/health")).status_code == 200:
                return time.monotonic() - start
        except httpx.TransportError:
            pass
        await asyncio.sleep(0.1)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("kind", ["restart", "crash", "outage"])
async def test_serve_rides_out_a_restart_a_crash_and_an_outage(cluster: OwnCluster, kind: str, tmp_path: Path,
                                                               _admin_key_material) -> None:
    key = admin_key(cluster, _admin_key_material)
    with psycopg.connect(cluster.url, autocommit=True) as conn:
        first_job = conn.execute("SELECT coalesce(max(id), 0) + 1 FROM procrastinate_jobs").fetchone()[0]
    options = ("--workers", "2") if kind == "crash" else ()
    log = tmp_path / "serve.log"
    with serve_process(cluster.env, log, *options) as (server, base):
        async with httpx.AsyncClient(base_url=base, timeout=60, headers={"Authorization": f"Bearer {key}"}) as http:
            await wait_healthy(http, server, log, within=150)
            assert (await http.post("/v1/vaults", json={"name": kind})).status_code == 201
            acked: dict[str, int] = {}
            refused: dict[str, int] = {}
            statuses: Counter[int] = Counter()
            phase = {"back": None, "first_ok_after": None, "healthy_after": None}

            async def writer(w: int) -> None:
                i, after = w, 0
                while after < AFTER:
                    key_ = f"{kind}-{i}"
                    r = await http.post(f"/v1/vaults/{kind}/memories", json={"content": sentence(kind, i)},
                                        headers={"Idempotency-Key": key_})
                    statuses[r.status_code] += 1
                    if r.status_code == 200:
                        acked[key_] = r.json()["results"][0]["block_id"]
                        if phase["back"] is not None:
                            after += 1
                            phase["first_ok_after"] = phase["first_ok_after"] or time.monotonic()
                    else:
                        assert r.status_code == 503, r.text
                        assert int(r.headers["retry-after"]) >= 1 and r.json()["error"] == "DatabaseUnavailable"
                        refused[key_] = i
                        await asyncio.sleep(0.2)
                    i += WRITERS
                    await asyncio.sleep(0.05)

            faults: list[asyncio.Future] = []

            async def break_it() -> None:
                await asyncio.sleep(1.5)
                faults.append(asyncio.get_running_loop().run_in_executor(None, fault, cluster, kind))
                await asyncio.shield(faults[0])  # a failing check elsewhere must not leave the server down
                phase["back"] = time.monotonic()

            health_503 = []

            async def watch_health() -> None:
                while True:
                    r = await http.get("/health")
                    if r.status_code == 503:
                        health_503.append(r.json()["problems"])
                        assert r.headers["retry-after"]
                    elif phase["back"] is not None:
                        phase["healthy_after"] = time.monotonic() - phase["back"]
                        return
                    await asyncio.sleep(0.1)

            try:
                await asyncio.wait_for(asyncio.gather(break_it(), watch_health(),
                                                      *(writer(w) for w in range(WRITERS))), timeout=OUTAGE_S + 120)
            finally:  # the server back up for the module's next test whatever failed here
                for started in faults:
                    await asyncio.wait([started])
            healthy_after = phase["healthy_after"]
            first_ok = phase["first_ok_after"] - phase["back"]
            assert server.poll() is None
            if kind != "restart":  # a fast restart may fall between two requests; the others cannot
                assert statuses[503] and health_503, f"the fault refused nothing: {statuses}"

            for key_, i in refused.items():  # retried with their keys: written once, or the committed answer
                r = await http.post(f"/v1/vaults/{kind}/memories", json={"content": sentence(kind, i)},
                                    headers={"Idempotency-Key": key_})
                assert r.status_code == 200, r.text
                acked.setdefault(key_, r.json()["results"][0]["block_id"])
            drained = await drain(cluster.url, http, server, log)

    with psycopg.connect(cluster.url) as conn:
        stored = dict(conn.execute(
            "SELECT i.key, (i.response->'results'->0->>'block_id')::bigint FROM memvault.idempotency_key i "
            "JOIN memvault.vault v ON v.id = i.vault_id WHERE v.name = %s", (kind,)).fetchall())
        blocks = {r[0] for r in conn.execute(
            "SELECT b.id FROM memvault.block b JOIN memvault.vault v ON v.id = b.vault_id WHERE v.name = %s",
            (kind,)).fetchall()}
        jobs = conn.execute(
            "SELECT j.id, j.task_name, j.status::text, "
            "       count(*) FILTER (WHERE e.type = 'started') AS starts,"
            "       count(*) FILTER (WHERE e.type = 'succeeded') AS successes "
            "  FROM procrastinate_jobs j JOIN procrastinate_events e ON e.job_id = j.id "
            " WHERE j.task_name <> 'retry_stalled_jobs' AND j.id >= %s GROUP BY j.id", (first_job,)).fetchall()
    assert stored.keys() == acked.keys() and all(stored[k] == b and b in blocks for k, b in acked.items()), \
        "an acknowledged write is missing"
    assert jobs and all(status == "succeeded" and successes == 1 for _, _, status, _, successes in jobs), \
        [j for j in jobs if j[2] != "succeeded"]
    rerun = [j for j in jobs if j[3] > 1]
    assert len(rerun) <= WRITERS * 2, rerun  # only jobs cut by the fault (the worker runs 2 at a time)
    print(f"\n{kind}: {sum(statuses.values())} writes ({dict(statuses)}), {len(acked)} acknowledged, "
          f"{len(refused)} refused then retried; {len(jobs)} jobs all succeeded ({len(rerun)} ran again after the "
          f"fault cut them); after the server was back: first write acknowledged in {first_ok:.2f} s, /health 200 "
          f"in {healthy_after:.2f} s; queue drained in {drained:.1f} s; /health 503 during: {health_503[:1]}")


async def drain(url: str, http: httpx.AsyncClient, server, log: Path, within: float = 120) -> float:
    """Wait until no job is waiting or running (a failed attempt's retry, scheduled a few seconds on, included);
    how long it took."""
    start = time.monotonic()
    while True:
        assert server.poll() is None, log.read_text()[-4000:]
        with psycopg.connect(url) as conn:
            left = conn.execute("SELECT count(*) FROM procrastinate_jobs WHERE status IN ('todo', 'doing') "
                                "AND task_name <> 'retry_stalled_jobs' "
                                "AND (scheduled_at IS NULL OR scheduled_at <= now() OR attempts > 0)"  # a retry
                                ).fetchone()[0]
        if left == 0:
            return time.monotonic() - start
        assert time.monotonic() - start < within, f"{left} jobs still queued:\n{log.read_text()[-4000:]}"
        await asyncio.sleep(0.5)


@pytest.mark.timeout(240)
async def test_mcp_over_http_is_the_service_role_and_says_retry_while_the_database_is_away(
        cluster: OwnCluster, _admin_key_material) -> None:
    """`memvault mcp --http` logs in as memvault_service; a wrong key is a 401 with the API's error body; with the
    server stopped a tool call is a tool error that says to retry (structuredContent: status 503), never the SDK's
    bare error; after a restart the first call works or says the same, and the next ones work."""
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    key = admin_key(cluster, _admin_key_material)
    async with mcp_http(cluster.env | {"MEMVAULT_API_KEY": key}, "agent", stop_s=30) as url:

        async def call(tool: str, arguments: dict):
            async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=60) as http, \
                    streamable_http_client(url, http_client=http) as (read, write), \
                    ClientSession(read, write) as session:
                await session.initialize()
                return await session.call_tool(tool, arguments)

        stored = await call("remember", {"content": "The staging database moves to the Frankfurt region in May."})
        assert not stored.is_error and stored.content[0].text.startswith("CREATE"), stored
        with psycopg.connect(cluster.url) as conn:
            logins = conn.execute("SELECT DISTINCT usename FROM pg_stat_activity WHERE datname = current_database() "
                                  "AND pid <> pg_backend_pid()").fetchall()
        assert logins == [("memvault_service",)], logins

        async with httpx2.AsyncClient(timeout=30) as http:
            r = await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize"},
                                headers={"Authorization": "Bearer mvk_nokey_wrong"})
        assert r.status_code == 401 and r.headers["www-authenticate"].startswith("Bearer")
        data = r.json()["error"]["data"]  # a JSON-RPC error (the SDK client reads it) with the API's error fields
        assert {"error", "detail", "where", "hint", "fields"} <= set(data) and data["where"] == "POST /mcp"

        await asyncio.to_thread(cluster.pg_ctl, "-m", "fast", "stop")
        try:
            away = await call("recall", {"query": "Where does the staging database move?"})
        finally:
            await asyncio.to_thread(cluster.pg_ctl, "start")
        assert away.is_error and "unavailable" in away.content[0].text and "retry" in away.content[0].text, away
        assert away.structured_content["status"] == 503 and away.structured_content["retry_after_s"] >= 1

        await asyncio.to_thread(cluster.pg_ctl, "-m", "fast", "restart")
        answers = []
        for _ in range(20):  # the first call after the restart: an answer, or the same "retry" tool error
            answers.append(await call("recall", {"query": "Where does the staging database move?"}))
            if not answers[-1].is_error:
                break
            assert answers[-1].structured_content["status"] == 503, answers[-1]
            await asyncio.sleep(answers[-1].structured_content["retry_after_s"])
        assert "Frankfurt" in answers[-1].content[0].text and len(answers) <= 2, answers
