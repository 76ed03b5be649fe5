"""Nothing blocks the event loop (issue 33, item 2): model calls run in the model pool (app/models/calls.py), so
while a recall waits 1 s on a slow embedder, the same API process answers other requests at once."""

from __future__ import annotations

import asyncio
import threading
import time

import httpx
import numpy as np

from app.models.base import Embedder
from app.services import Services
from tests.integration.served import served

# The one latency bound the issue asks for (the only timed assertion of this suite's write/read tests).
BOUND_S = 0.050


class SlowEmbedder(Embedder):
    """The real embedder, but a query takes 1 s (an HTTP embedder with a slow server, say)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name, self.dim = inner.name, inner.dim
        self.started = threading.Event()
        self.finished_at = 0.0

    def _encode(self, texts: list[str], *, query: bool) -> np.ndarray:
        if query:
            self.started.set()
            time.sleep(1.0)
            self.finished_at = time.perf_counter()
        return self.inner._encode(texts, query=query)


async def test_other_requests_are_answered_while_a_model_is_slow(api_services, admin_key) -> None:
    slow = SlowEmbedder(api_services.embedder)
    svc = Services(settings=api_services.settings, db=api_services.db, embedder=slow, llm=api_services.llm,
                   reranker=None)
    try:
        async with served(svc) as url, httpx.AsyncClient(
                base_url=url, headers={"Authorization": f"Bearer {admin_key}"}, timeout=30) as http:
            assert (await http.post("/v1/vaults", json={"name": "alice"})).status_code == 201
            assert (await http.post("/v1/vaults/alice/memories",
                                    json={"content": "I live in Taipei"})).status_code == 200
            # warm: first-call costs are not the point. /health says 503 here (no job worker runs beside this app):
            # an answer all the same, which is what is measured
            idle_health = (await http.get("/health")).status_code
            assert (await http.get("/v1/vaults/alice/memories")).status_code == 200
            headers = {"Authorization": f"Bearer {admin_key}"}

            def probe() -> list[tuple[str, int, float, float]]:
                """From another thread (its clock does not stop when the server's loop does): once the recall
                is embedding, other requests, each with its time and when it was answered."""
                assert slow.started.wait(10)
                out = []
                with httpx.Client(base_url=url, headers=headers, timeout=10) as c:
                    for path in ("/health", "/v1/vaults/alice/memories", "/health"):
                        t0 = time.perf_counter()
                        r = c.get(path)
                        out.append((path, r.status_code, time.perf_counter() - t0, time.perf_counter()))
                return out

            recall = asyncio.create_task(http.post("/v1/vaults/alice/recall", json={"query": "where do I live?"}))
            answers = await asyncio.to_thread(probe)
            answer = await recall
            assert answer.status_code == 200 and answer.json()["cards"]
        assert [a[1] for a in answers] == [idle_health, 200, idle_health]
        assert all(at < slow.finished_at for *_, at in answers), "answered while the embedder was still busy"
        assert all(took < BOUND_S for _, _, took, _ in answers), answers
    finally:
        svc.models.close()
