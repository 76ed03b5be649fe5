"""A worker killed (SIGKILL) in the middle of a job: the job is retried by the next worker (Procrastinate's stalled
jobs, found by their dead worker's heartbeat: app/background/stalled.py) and has its effect once."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from app.vaults import get_vault
from app.write.graph import GraphBuild
from tests.fakes.openai_server import FakeOpenAI, Reply

REPO = Path(__file__).resolve().parents[2]
CHAT = "/v1/chat/completions"


def worker(db_url: str, **env: str) -> subprocess.Popen:
    full = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    full.update(PYTHONPATH=str(REPO), MEMVAULT_DATABASE_URL=db_url, MEMVAULT_WORKER_HEARTBEAT_S="1",
                MEMVAULT_WORKER_STALLED_S="3", MEMVAULT_WORKER_CONCURRENCY="1", MEMVAULT_RERANKER="none",
                MEMVAULT_RAIL2_EMBEDDER="none", **env)
    return subprocess.Popen([sys.executable, "-m", "app.cli", "worker"], env=full, cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


async def job_status(services, task: str) -> list[tuple[str, int]]:
    rows = await services.db.fetchall("SELECT status::text AS s, attempts FROM public.procrastinate_jobs "
                                      "WHERE task_name = %s ORDER BY id", (task,))
    return [(r["s"], r["attempts"]) for r in rows]


async def wait_for(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not await predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.2)


async def test_killed_worker_job_is_retried_without_double_effect(client, services, db_url: str) -> None:
    assert (await client.post("/v1/vaults", json={"name": "k"})).status_code == 201
    r = await client.post("/v1/vaults/k/memories", json={"items": [
        {"content": "Larsen works at Acme Robotics."}, {"content": "Haugen lives in Tromso."}]})
    assert r.status_code == 200
    assert await job_status(services, "build_graph") == [("todo", 0)]

    with FakeOpenAI() as fake:
        fake.script(CHAT, Reply(delay_s=120))  # the first worker's graph build hangs on the model
        first = worker(db_url, MEMVAULT_LLM="openai", MEMVAULT_LLM_URL=fake.url, MEMVAULT_LLM_MODEL="m",
                       MEMVAULT_LLM_TIMEOUT_S="300", MEMVAULT_LLM_MAX_RETRIES="0")
        try:
            async def asked() -> bool:
                return any(req.path == CHAT for req in fake.requests)
            await wait_for(asked, 90, "the first worker to start the job")
            assert await job_status(services, "build_graph") == [("doing", 0)]
            first.send_signal(signal.SIGKILL)  # in the middle of the job
            first.wait(10)
        finally:
            if first.poll() is None:
                first.kill()
    assert await job_status(services, "build_graph") == [("doing", 0)], "a killed worker cannot mark its job"
    await asyncio.sleep(3.5)  # its heartbeat is now older than the stalled threshold

    second = worker(db_url, MEMVAULT_LLM="heuristic")
    try:
        async def done() -> bool:
            return (await job_status(services, "build_graph"))[0][0] == "succeeded"
        await wait_for(done, 90, "the second worker to retry the stalled job")
    finally:
        second.send_signal(signal.SIGTERM)
        try:
            second.wait(20)
        except subprocess.TimeoutExpired:
            second.kill()

    [(status, attempts)] = await job_status(services, "build_graph")
    assert status == "succeeded" and attempts >= 1
    vault = await get_vault(services.db, "k")
    count = "SELECT count(*) AS n, count(DISTINCT (subject_id, predicate, object_id, evidence_block_id)) AS d " \
            "FROM memvault.triple"
    once = await services.db.fetchone(count)
    assert once["n"] == once["d"] > 0
    edges = await services.db.fetchone("SELECT * FROM memvault.graph_counts_v1(%s)", (vault.id,))
    assert edges["edges"] == once["n"]
    # The same job delivered again (a worker killed after its commit) changes nothing.
    ids = [b["id"] for b in await services.db.fetchall("SELECT id FROM memvault.block")]
    await GraphBuild(services).run(vault.id, ids)
    assert await services.db.fetchone(count) == once
    assert (await services.db.fetchone("SELECT * FROM memvault.graph_counts_v1(%s)", (vault.id,)))["edges"] == once["n"]
