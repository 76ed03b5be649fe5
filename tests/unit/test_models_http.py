"""The OpenAI-compatible clients (chat LLM, embeddings, rerank) against a real HTTP server on 127.0.0.1.

Covers normal replies, slow replies past the timeout, 500s, invalid JSON, truncated JSON, dropped connections,
a server that goes away mid-test, and the circuit breaker around all of it. Nothing is mocked below HTTP.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from app.errors import CircuitOpen, ModelError
from app.models.breaker import CircuitBreaker
from app.models.embedders.openai import OpenAIEmbedder
from app.models.llms.openai import OpenAILLM
from app.models.registry import ModelCache
from app.models.rerankers.fitgate import FitGateReranker
from app.models.rerankers.http import HTTPReranker
from app.models.tasks import FIT_GATE, RESOLVE_CONFLICT
from app.models.tasks.resolve_conflict import ResolveConflictInput
from app.settings import Settings
from tests.fakes.openai_server import FakeOpenAI, Reply, fake_vector

CHAT = "/v1/chat/completions"
MERGE = '{"action": "MERGE", "confidence": 0.9, "reason": "same fact"}'
PAYLOAD = ResolveConflictInput(existing="I live in Boston.", new="I moved to Seattle.", similarity=0.8)


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def fake():
    with FakeOpenAI(embed_dim=16) as server:
        yield server


def make_llm(
    fake: FakeOpenAI, *, timeout_s: float = 2.0, retries: int = 1, clock: Clock | None = None, **kw
) -> OpenAILLM:
    breaker = CircuitBreaker("llm-test", failures=3, open_s=60, clock=clock or Clock())
    return OpenAILLM(
        fake.url,
        "tiny-chat",
        breaker=breaker,
        api_key="sk-test",
        timeout_s=timeout_s,
        retries=retries,
        backoff_s=0.01,
        **kw,
    )


# --- chat LLM ----------------------------------------------------------------------------------------
async def test_normal_reply_is_validated_and_asks_for_json_schema(fake: FakeOpenAI) -> None:
    fake.chat_content = MERGE
    llm = make_llm(fake)
    result = await llm.run_traced(RESOLVE_CONFLICT, PAYLOAD)
    assert result.source == "model" and result.fallback_reason is None
    assert (result.output.action, result.output.confidence) == ("MERGE", 0.9)
    req = fake.requests[-1]
    assert req.path == CHAT and req.headers["Authorization"] == "Bearer sk-test"
    assert req.body["model"] == "tiny-chat" and req.body["temperature"] == 0.0
    fmt = req.body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["name"] == "resolve_conflict"
    assert set(fmt["json_schema"]["schema"]["properties"]) == {"action", "confidence", "reason"}
    assert (
        req.body["messages"][0]["role"] == "system"
        and "I moved to Seattle." in req.body["messages"][-1]["content"]
    )
    assert llm.stats()["totals"]["model_ok"] == 1
    await llm.aclose()


async def test_response_format_fallback_is_negotiated_once(fake: FakeOpenAI) -> None:
    fake.chat_content = "```json\n" + MERGE + "\n```"
    fake.reject_response_formats = {"json_schema", "json_object"}
    llm = make_llm(fake)
    out = await llm.run(RESOLVE_CONFLICT, PAYLOAD)
    assert out.action == "MERGE"
    kinds = [(r.body.get("response_format") or {}).get("type") for r in fake.requests]
    assert kinds == ["json_schema", "json_object", None]
    assert llm.json_mode == "none"
    await llm.run(RESOLVE_CONFLICT, PAYLOAD)
    assert "response_format" not in fake.requests[-1].body and len(fake.requests) == 4  # remembered
    assert llm.stats()["totals"]["repaired"] == 2  # code fences stripped
    assert llm.breaker.failures == 0  # a rejected format is not a backend failure


async def test_slow_reply_past_timeout_falls_back_to_heuristic(fake: FakeOpenAI) -> None:
    fake.chat_content = MERGE
    fake.script(CHAT, Reply(delay_s=1.0), Reply(delay_s=1.0))
    llm = make_llm(fake, timeout_s=0.2, retries=1)
    result = await llm.run_traced(RESOLVE_CONFLICT, PAYLOAD)
    assert result.source == "heuristic" and result.fallback_reason == "error"
    assert "timed out" in result.detail
    assert result.output.action == "SUPERSEDE"  # the heuristic's answer (Boston -> Seattle)
    assert len(fake.requests) == 2  # one retry
    assert llm.stats()["totals"]["errors"] == 1 and llm.breaker.failures == 1


async def test_500s_are_retried_then_succeed(fake: FakeOpenAI) -> None:
    fake.chat_content = MERGE
    fake.script(CHAT, Reply(status=500), Reply(status=503))
    llm = make_llm(fake, retries=2)
    result = await llm.run_traced(RESOLVE_CONFLICT, PAYLOAD)
    assert result.source == "model" and len(fake.requests) == 3
    fake.script(CHAT, *[Reply(status=500)] * 3)
    result = await llm.run_traced(RESOLVE_CONFLICT, PAYLOAD)
    assert result.fallback_reason == "error" and "HTTP 500" in result.detail


async def test_invalid_json_content_falls_back_and_is_counted(fake: FakeOpenAI) -> None:
    fake.chat_content = "I would say MERGE, with high confidence."
    llm = make_llm(fake)
    result = await llm.run_traced(RESOLVE_CONFLICT, PAYLOAD)
    assert result.source == "heuristic" and result.fallback_reason == "invalid_output"
    # Valid JSON that breaks the schema is invalid output too.
    fake.chat_content = '{"action": "DELETE", "confidence": 2}'
    result = await llm.run_traced(RESOLVE_CONFLICT, PAYLOAD)
    assert result.fallback_reason == "invalid_output"
    stats = llm.stats()["by_task"]["resolve_conflict.v1"]
    assert stats["invalid_output"] == 2 and stats["heuristic"] == 2
    assert llm.breaker.failures == 0  # the server answered: not a breaker failure


async def test_invalid_json_http_body_is_an_error(fake: FakeOpenAI) -> None:
    fake.script(CHAT, Reply(body="<html>502 Bad Gateway</html>"))
    llm = make_llm(fake)
    result = await llm.run_traced(RESOLVE_CONFLICT, PAYLOAD)
    assert result.fallback_reason == "error" and "invalid JSON" in result.detail


async def test_truncated_json_content_is_repaired(fake: FakeOpenAI) -> None:
    fake.chat_content = '{"action": "SUPERSEDE", "confidence": 0.85, "reason": "moved from Bos'
    llm = make_llm(fake)
    result = await llm.run_traced(RESOLVE_CONFLICT, PAYLOAD)
    assert result.source == "model" and result.detail == "repaired JSON"
    assert result.output.action == "SUPERSEDE" and result.output.reason == "moved from Bos"
    assert llm.stats()["totals"]["repaired"] == 1


async def test_truncated_http_body_and_dropped_connection_are_retried(fake: FakeOpenAI) -> None:
    fake.chat_content = MERGE
    fake.script(CHAT, Reply(truncate=True), Reply(close=True))
    llm = make_llm(fake, retries=2)
    result = await llm.run_traced(RESOLVE_CONFLICT, PAYLOAD)
    assert result.source == "model" and len(fake.requests) == 3


async def test_server_goes_away_breaker_opens_then_recovers(fake: FakeOpenAI) -> None:
    clock = Clock()
    fake.chat_content = MERGE
    llm = make_llm(fake, retries=0, clock=clock)
    assert (await llm.run_traced(RESOLVE_CONFLICT, PAYLOAD)).source == "model"
    fake.stop()  # mid-test
    for _ in range(3):
        r = await llm.run_traced(RESOLVE_CONFLICT, PAYLOAD)
        assert r.fallback_reason == "error"
    assert llm.breaker.state == "open"
    r = await llm.run_traced(RESOLVE_CONFLICT, PAYLOAD)
    assert r.fallback_reason == "circuit_open" and r.output.action == "SUPERSEDE"
    fake.start()  # back on the same port
    n = len(fake.requests)
    r = await llm.run_traced(RESOLVE_CONFLICT, PAYLOAD)
    assert r.fallback_reason == "circuit_open" and len(fake.requests) == n  # still open: not even tried
    clock.t += 60
    r = await llm.run_traced(RESOLVE_CONFLICT, PAYLOAD)  # the half-open probe
    assert r.source == "model" and llm.breaker.state == "closed"
    totals = llm.stats()["totals"]
    assert (totals["errors"], totals["short_circuits"], totals["model_ok"]) == (3, 2, 2)
    snap = llm.breaker.snapshot()
    assert snap["trips"] == 1 and snap["short_circuits"] == 2


async def test_registry_builds_openai_llm_from_settings(fake: FakeOpenAI) -> None:
    models = ModelCache(1)
    settings = Settings(
        llm="openai", llm_url=fake.url + "/v1", llm_model="m", llm_timeout_s=2, llm_max_retries=0
    )
    llm = models.llm(settings)
    assert models.llm(settings) is llm and ModelCache(1).llm(settings) is not llm  # a cache per service
    fake.chat_content = MERGE
    assert (await llm.run(RESOLVE_CONFLICT, PAYLOAD.model_dump())).action == "MERGE"
    assert fake.requests[-1].path == CHAT
    assert "llm:openai:" + fake.url + "/v1" in models.breakers.snapshot()  # its breaker is the cache's
    models.close()


# --- fit gate through the chat LLM ------------------------------------------------------------------
async def test_fitgate_with_model_and_failing_open(fake: FakeOpenAI) -> None:
    fake.chat_content = json.dumps(
        {
            "verdicts": [
                {"index": 0, "keep": True, "reason": "on topic"},
                {"index": 1, "keep": False, "reason": "cosmology, not gardens"},
            ]
        }
    )
    gate = FitGateReranker(make_llm(fake, retries=0))
    texts = ["Moss and stone in a Japanese garden.", "Hubble's law: the emptiness of space expands."]
    assert await gate.score("negative space in Japanese gardens", texts) == [1.0, 0.0]
    verdicts = await gate.judge("negative space in Japanese gardens", texts)
    assert verdicts.verdicts[1].reason == "cosmology, not gardens"
    fake.stop()
    assert await gate.score("negative space in Japanese gardens", texts) == [1.0, 1.0]  # error keeps all
    assert gate.fail_open == 1
    fake.start()
    fake.chat_content = "not json"
    assert await gate.score("negative space in Japanese gardens", texts) == [1.0, 1.0]  # so does garbage
    assert FIT_GATE.id == "fit_gate.v1"


# --- embeddings --------------------------------------------------------------------------------------
def make_embedder(fake: FakeOpenAI, **kw) -> OpenAIEmbedder:
    breaker = kw.pop("breaker", None) or CircuitBreaker(
        "emb-test", failures=2, open_s=60, clock=Clock()
    )
    return OpenAIEmbedder(
        fake.url,
        "tiny-embed",
        breaker=breaker,
        timeout_s=kw.pop("timeout_s", 2.0),
        retries=kw.pop("retries", 1),
        backoff_s=0.01,
        **kw,
    )


def test_embeddings_normal_probe_order_and_batching(fake: FakeOpenAI) -> None:
    emb = make_embedder(fake)
    assert emb.dim == 16 and emb.name == "openai:tiny-embed"  # probed once
    texts = [f"text {i}" for i in range(70)]
    out = emb.embed_documents(texts)
    assert out.shape == (70, 16) and out.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(out[5], fake_vector("text 5", 16), rtol=1e-5)  # sorted back by index
    assert [len(r.body["input"]) for r in fake.requests] == [1, 64, 6]
    np.testing.assert_allclose(emb.embed_query("q"), fake_vector("q", 16), rtol=1e-5)


def test_embeddings_failures(fake: FakeOpenAI) -> None:
    emb = make_embedder(fake, dim=16, timeout_s=0.2, retries=1)
    fake.script("/v1/embeddings", Reply(status=500))
    assert emb.embed_documents(["a"]).shape == (1, 16)  # retried
    fake.script("/v1/embeddings", Reply(delay_s=1.0), Reply(delay_s=1.0))
    with pytest.raises(ModelError, match="timed out"):
        emb.embed_documents(["slow"])
    fake.script("/v1/embeddings", Reply(body='{"data": [{"embedding": [0.1, 0.2'))
    with pytest.raises(ModelError, match="invalid JSON"):
        emb.embed_documents(["truncated"])
    assert emb.breaker.state == "open"  # two consecutive failures
    with pytest.raises(CircuitOpen):
        emb.embed_documents(["skipped"])


def test_embeddings_wrong_dimension_and_server_gone(fake: FakeOpenAI) -> None:
    emb = make_embedder(fake, dim=32)
    with pytest.raises(ModelError, match="expected 32"):
        emb.embed_documents(["a"])
    fake.stop()
    with pytest.raises(ModelError, match="unreachable"):
        make_embedder(fake, dim=16, retries=0).embed_documents(["a"])


def test_registry_openai_embedder(fake: FakeOpenAI) -> None:
    models = ModelCache(1)
    emb = models.embedder(
        Settings(embedder="openai", embedder_url=fake.url, embedder_model="e", embedder_dim=16)
    )
    assert emb.embed_query("hello").shape == (16,)
    models.close()


# --- rerank ------------------------------------------------------------------------------------------
def make_reranker(fake: FakeOpenAI, **kw) -> HTTPReranker:
    breaker = CircuitBreaker("rr-test", failures=2, open_s=60, clock=Clock())
    return HTTPReranker(
        fake.url,
        kw.pop("model", "tiny-rerank"),
        breaker=breaker,
        timeout_s=kw.pop("timeout_s", 2.0),
        retries=kw.pop("retries", 1),
        backoff_s=0.01,
        **kw,
    )


async def test_rerank_v1_and_tei_shapes(fake: FakeOpenAI) -> None:
    docs = ["the cat sat", "dogs bark loudly", "a cat and a dog"]
    rr = make_reranker(fake)
    assert await rr.score("cat dog", docs) == [0.5, 0.0, 1.0]
    body = fake.requests[-1].body
    assert body["model"] == "tiny-rerank" and body["documents"] == docs and body["top_n"] == 3
    tei = make_reranker(fake, path="/rerank")
    assert await tei.score("cat dog", docs) == [0.5, 0.0, 1.0]
    assert fake.requests[-1].path == "/rerank"
    fake.script("/v1/rerank", Reply(body={"results": [{"index": 2, "relevance_score": 0.7}]}))
    scores = await rr.score("cat dog", docs)
    assert scores[2] == 0.7 and scores[0] == -math.inf  # left out by top_n
    assert await rr.score("q", []) == []


async def test_rerank_failures_and_breaker(fake: FakeOpenAI) -> None:
    rr = make_reranker(fake, timeout_s=0.2, retries=0)
    fake.script("/v1/rerank", Reply(body={"results": [{"index": 9, "relevance_score": 1}]}))
    with pytest.raises(ModelError, match="outside"):
        await rr.score("q", ["a"])
    fake.script("/v1/rerank", Reply(delay_s=1.0))
    with pytest.raises(ModelError, match="timed out"):
        await rr.score("q", ["a"])
    with pytest.raises(CircuitOpen):
        await rr.score("q", ["a"])
    assert rr.breaker.snapshot()["trips"] == 1


async def test_registry_reranker_none_and_http(fake: FakeOpenAI) -> None:
    models = ModelCache(1)
    assert models.reranker(Settings(reranker="none")) is None
    rr = models.reranker(Settings(reranker="http", reranker_url=fake.url))
    assert await rr.score("cat", ["cat", "dog"]) == [1.0, 0.0]
    assert "model" not in fake.requests[-1].body
    models.close()
