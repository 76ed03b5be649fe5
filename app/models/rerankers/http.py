"""``http``: a rerank server. ``POST {url}/v1/rerank`` with ``{model, query, documents, top_n}``.

Parses the replies of the servers that speak it: ``{"results": [{"index", "relevance_score"}]}`` (vLLM,
llama.cpp, Jina, Cohere, TEI's ``/v1/rerank``) and TEI's native list ``[{"index", "score"}]``. A document the
server left out (``top_n`` < n) gets ``-inf``. Behind the circuit breaker; retried on timeouts and 5xx.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import httpx

from app.models.base import Reranker
from app.models.breaker import CircuitBreaker
from app.models.http import HTTPModelError, LoopLocalClient, RetryPolicy, apost_json, endpoint


class HTTPReranker(Reranker):
    def __init__(
        self,
        base_url: str,
        model: str | None,
        *,
        breaker: CircuitBreaker,
        api_key: str | None = None,
        timeout_s: float = 5.0,
        retries: int = 1,
        backoff_s: float = 0.2,
        path: str = "/v1/rerank",
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.url = endpoint(base_url, path)
        self.model = model
        self.name = f"http:{model or 'default'}"
        self.breaker = breaker
        self.api_key = api_key
        self.timeout_s = timeout_s
        self.policy = RetryPolicy(retries=retries, backoff_s=backoff_s)
        self._client = LoopLocalClient(transport=transport) if transport else LoopLocalClient()

    async def score(self, query: str, texts: Sequence[str]) -> list[float]:
        texts = list(texts)
        if not texts:
            return []
        body: dict[str, Any] = {
            "query": query,
            "documents": texts,
            "top_n": len(texts),
            "return_documents": False,
        }
        if self.model:
            body["model"] = self.model
        with self.breaker.guard():
            data = await apost_json(
                self._client.get(),
                self.url,
                body,
                policy=self.policy,
                timeout_s=self.timeout_s,
                api_key=self.api_key,
            )
            return parse_rerank(data, len(texts), self.url)

    async def aclose(self) -> None:
        await self._client.aclose()


def parse_rerank(data: Any, n: int, url: str = "rerank") -> list[float]:
    items = data.get("results", data.get("data")) if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise HTTPModelError(f"{url}: no results list in reply: {str(data)[:200]}")
    scores = [-math.inf] * n
    for item in items:
        try:
            idx = int(item["index"])
            value = item["relevance_score"] if "relevance_score" in item else item["score"]
            value = float(value)
        except (KeyError, TypeError, ValueError) as exc:
            raise HTTPModelError(f"{url}: malformed result {str(item)[:120]}") from exc
        if not 0 <= idx < n:
            raise HTTPModelError(f"{url}: result index {idx} outside 0..{n - 1}")
        if math.isnan(value):
            raise HTTPModelError(f"{url}: NaN score")
        scores[idx] = value
    return scores
