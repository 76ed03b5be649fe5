"""``GET /health``: database, server and extension versions, embedder, worker liveness, breakers."""

from __future__ import annotations

from litestar import Controller, get

from app.db.queries import Q
from app.services import Services


class HealthController(Controller):
    path = "/health"
    opt = {"public": True}  # no API key needed (app.api.guard)
    tags = ["health"]

    @get("/", summary="Service health")
    async def health(self, services: Services) -> dict:
        from app.models.breaker import breaker_snapshot

        row = await services.db.fetchone(Q.health)
        assert row is not None
        upkeep = await services.db.fetchone(Q.upkeep_summary)  # `memvault db stats` has the details
        return {
            "status": "ok",
            "database": {"server_version": row["server_version"], "extensions": {"vector": row["vector"],
                                                                                   "age": row["age"]}},
            "embedder": {"name": services.embedder.name, "dim": services.embedder.dim},
            "rail2": {"name": services.rail2.name, "dim": services.rail2.dim} if services.rail2 else None,
            "llm": getattr(services.llm, "name", type(services.llm).__name__),
            "reranker": getattr(services.reranker, "name", None) if services.reranker else "none",
            "worker": {"alive": row["live_workers"] > 0, "live_workers": row["live_workers"],
                       "queued_jobs": row["queued_jobs"]},
            "breakers": breaker_snapshot(),
            # the hot standbys that serve reads (MEMVAULT_REPLICA_URLS): up or skipped, and how far behind
            "replicas": services.replicas.snapshot() if services.replicas is not None else [],
            "upkeep": upkeep,
        }
