"""``GET /health``: each part of the service and whether it works, 200 when all do, 503 (Retry-After) when one
does not: the database unreachable, no live job worker, or the job queue stalled (jobs due for longer than
``health_queue_stall_s`` and none started meanwhile). Also versions, models and breakers."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Response, get
from litestar.openapi.datastructures import ResponseSpec

from app.db.queries import Q
from app.errors import DatabaseUnavailable
from app.services import Services

RETRY_AFTER = {"Retry-After": "5"}


class HealthController(Controller):
    path = "/health"
    opt = {"public": True}  # no API key needed (app.api.guard)
    tags = ["health"]

    @get("/", summary="Service health: 200 when every part works, 503 naming the parts that do not",
         responses={503: ResponseSpec(dict[str, Any], description="A part does not work: `problems` says which "
                                      "(the same body as 200; Retry-After)", generate_examples=False)})
    async def health(self, services: Services) -> Response[dict[str, Any]]:
        body = await health_report(services)
        return Response(body, status_code=200 if body["status"] == "ok" else 503,
                        headers=None if body["status"] == "ok" else RETRY_AFTER)


async def health_report(services: Services) -> dict[str, Any]:
    settings = services.settings
    reach = services.db.reachability.snapshot()
    body: dict[str, Any] = {
        "status": "ok",
        "problems": [],
        "api": {"alive": True},
        "database": reach,
        "worker": None,
        "queue": None,
        "embedder": {"name": services.embedder.name, "dim": services.embedder.dim},
        "rail2": {"name": services.rail2.name, "dim": services.rail2.dim} if services.rail2 else None,
        "llm": getattr(services.llm, "name", type(services.llm).__name__),
        "reranker": getattr(services.reranker, "name", None) if services.reranker else "none",
        "breakers": services.breakers.snapshot(),
        # the hot standbys that serve reads (MEMVAULT_REPLICA_URLS): up or skipped, and how far behind
        "replicas": services.replicas.snapshot() if services.replicas is not None else [],
        "upkeep": None,
    }
    try:
        row = await services.db.fetchone(Q.health, {"alive_s": settings.worker_stalled_s})
        # in the same try: a server that goes away between the two statements is a report too, never the
        # generic 503 error body (a client reading `problems` found none: the fault test's outage, once)
        upkeep = await services.db.fetchone(Q.upkeep_summary)  # `memvault db stats` has the details
    except DatabaseUnavailable as exc:
        body["database"] = {**services.db.reachability.snapshot(), "reachable": False, "last_error": exc.message}
        body["problems"].append(f"database unreachable: {exc.message}")
        body["status"] = "unavailable"
        return body
    assert row is not None
    body["database"] = {**reach, "server_version": row["server_version"],
                        "extensions": {"vector": row["vector"], "age": row["age"]}}
    oldest = None if row["oldest_due_s"] is None else round(float(row["oldest_due_s"]), 1)
    last_start = None if row["last_start_s"] is None else round(float(row["last_start_s"]), 1)
    stall = settings.health_queue_stall_s
    stalled = oldest is not None and oldest > stall and (last_start is None or last_start > stall)
    body["worker"] = {"alive": row["live_workers"] > 0, "live_workers": row["live_workers"],
                      "queued_jobs": row["queued_jobs"]}  # queued_jobs: as before, for existing readers
    body["upkeep"] = upkeep
    body["queue"] = {"queued": row["queued_jobs"], "running": row["running_jobs"], "oldest_due_s": oldest,
                     "last_start_s": last_start, "stalled": stalled, "stall_after_s": stall}
    if not body["worker"]["alive"]:
        body["problems"].append(f"no job worker has sent a heartbeat in {settings.worker_stalled_s:g} s: jobs do "
                                "not run (start `memvault worker`, or `memvault serve` runs one)")
    if stalled:
        body["problems"].append(f"the job queue is stalled: a job has been due for {oldest:g} s and none started "
                                f"in {stall:g} s")
    if body["problems"]:
        body["status"] = "unavailable"
    return body
