"""``GET /health``: database, server and extension versions, embedder, worker liveness, breakers."""

from __future__ import annotations

from litestar import Controller, get

from app.services import Services


class HealthController(Controller):
    path = "/health"
    opt = {"public": True}  # no API key needed (app.api.guard)
    tags = ["health"]

    @get("/", summary="Service health")
    async def health(self, services: Services) -> dict:
        from app.models.breaker import breaker_snapshot

        row = await services.db.fetchone(
            """
            SELECT current_setting('server_version') AS server_version,
                   (SELECT extversion FROM pg_extension WHERE extname = 'vector') AS vector,
                   (SELECT extversion FROM pg_extension WHERE extname = 'age') AS age,
                   (SELECT count(*) FROM public.procrastinate_workers
                     WHERE last_heartbeat > now() - interval '60 seconds') AS live_workers,
                   (SELECT count(*) FROM public.procrastinate_jobs WHERE status = 'todo') AS queued_jobs
            """
        )
        assert row is not None
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
        }
