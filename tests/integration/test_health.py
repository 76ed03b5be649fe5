"""GET /health names each part and answers 503 when one fails: no live worker, or a stalled queue (a job due for
longer than health_queue_stall_s and none started since); 200 when a worker sends heartbeats and jobs move."""

from __future__ import annotations


async def _worker_alive(services) -> None:
    await services.db.fetchone("INSERT INTO procrastinate_workers (last_heartbeat) VALUES (now()) RETURNING id")


async def _job_due_since(services, seconds: int) -> None:
    row = await services.db.fetchone("INSERT INTO procrastinate_jobs (queue_name, task_name, args) "
                                     "VALUES ('default', 'build_graph', '{}') RETURNING id")
    await services.db.fetchone("UPDATE procrastinate_events SET at = now() - make_interval(secs => %s) "
                               "WHERE job_id = %s RETURNING id", (seconds, row["id"]))


async def test_health_is_200_with_a_live_worker_and_a_moving_queue(client, services) -> None:
    await _worker_alive(services)
    await _job_due_since(services, 5)
    r = await client.get("/health")
    assert r.status_code == 200, r.json()
    body = r.json()
    assert body["status"] == "ok" and body["problems"] == [] and body["worker"]["alive"]
    assert body["queue"]["queued"] == 1 and 4 <= body["queue"]["oldest_due_s"] < 60 and not body["queue"]["stalled"]


async def test_health_is_503_when_the_queue_stalls(client, services) -> None:
    await _worker_alive(services)  # a worker that sends heartbeats but runs nothing
    await _job_due_since(services, 3600)
    r = await client.get("/health")
    assert r.status_code == 503 and r.headers["retry-after"]
    body = r.json()
    assert body["queue"]["stalled"] and body["queue"]["last_start_s"] is None
    assert body["problems"] == [f"the job queue is stalled: a job has been due for {body['queue']['oldest_due_s']:g} "
                                "s and none started in 300 s"]
