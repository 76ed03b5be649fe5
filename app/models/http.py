"""HTTP plumbing shared by the OpenAI-compatible clients (embeddings, rerank, chat): URL joining, headers, the
retry policy (exponential backoff on timeouts, connection errors, 429 and 5xx) and error translation.

Every failure leaves as :class:`~app.errors.ModelError`; ``status`` on it is the HTTP status when there was one
(``None`` for timeouts and connection errors), so a caller can tell "the server rejected this request" (4xx, not
retried) from "the server is unwell" (retried, then counted by the circuit breaker).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from app.errors import ModelError


class HTTPModelError(ModelError):
    """A request to a model server failed; ``http_status`` is the response status if one came back."""

    def __init__(self, message: str, *, http_status: int | None = None, body: str | None = None) -> None:
        super().__init__(message)
        self.http_status = http_status
        self.body = body


def endpoint(base_url: str, path: str) -> str:
    """``http://h:1/`` or ``http://h:1/v1`` + ``/v1/rerank`` -> ``http://h:1/v1/rerank``."""
    base = base_url.rstrip("/")
    if base.endswith("/v1") and path.startswith("/v1/"):
        path = path[3:]
    return base + path


def headers(api_key: str | None) -> dict[str, str]:
    h = {"Content-Type": "application/json", "Accept": "application/json"}
    if api_key:
        h["Authorization"] = f"Bearer {api_key}"
    return h


@dataclass(frozen=True)
class RetryPolicy:
    retries: int = 2
    backoff_s: float = 0.5
    max_backoff_s: float = 8.0

    def delay(self, attempt: int) -> float:
        return min(self.max_backoff_s, self.backoff_s * (2**attempt))


def _retryable_status(status: int) -> bool:
    return status == 429 or status >= 500


def _decode(resp: httpx.Response, url: str) -> Any:
    if resp.status_code >= 400:
        raise HTTPModelError(
            f"{url} answered HTTP {resp.status_code}: {resp.text[:200]}",
            http_status=resp.status_code,
            body=resp.text[:2000],
        )
    try:
        return resp.json()
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise HTTPModelError(
            f"{url} answered invalid JSON: {resp.text[:120]!r}", http_status=resp.status_code
        ) from exc


def _transport_error(exc: httpx.HTTPError, url: str, timeout_s: float) -> HTTPModelError:
    if isinstance(exc, httpx.TimeoutException):
        return HTTPModelError(f"{url} timed out after {timeout_s:g}s ({type(exc).__name__})")
    return HTTPModelError(f"{url} unreachable: {type(exc).__name__}: {exc}")


async def apost_json(
    client: httpx.AsyncClient,
    url: str,
    body: Mapping[str, Any],
    *,
    policy: RetryPolicy,
    timeout_s: float,
    api_key: str | None = None,
) -> Any:
    """POST ``body`` and return the decoded JSON, retrying transient failures. Raises HTTPModelError."""
    last: HTTPModelError | None = None
    for attempt in range(policy.retries + 1):
        if attempt:
            await asyncio.sleep(policy.delay(attempt - 1))
        try:
            resp = await client.post(url, json=body, headers=headers(api_key), timeout=timeout_s)
        except httpx.HTTPError as exc:
            last = _transport_error(exc, url, timeout_s)
            continue
        if _retryable_status(resp.status_code):
            last = HTTPModelError(f"{url} answered HTTP {resp.status_code}", http_status=resp.status_code)
            continue
        return _decode(resp, url)
    assert last is not None
    raise HTTPModelError(
        f"{last.message} (after {policy.retries + 1} attempts)", http_status=last.http_status
    )


def post_json(
    client: httpx.Client,
    url: str,
    body: Mapping[str, Any],
    *,
    policy: RetryPolicy,
    timeout_s: float,
    api_key: str | None = None,
) -> Any:
    """Blocking form of :func:`apost_json` for the (synchronous) embedder protocol."""
    last: HTTPModelError | None = None
    for attempt in range(policy.retries + 1):
        if attempt:
            time.sleep(policy.delay(attempt - 1))
        try:
            resp = client.post(url, json=body, headers=headers(api_key), timeout=timeout_s)
        except httpx.HTTPError as exc:
            last = _transport_error(exc, url, timeout_s)
            continue
        if _retryable_status(resp.status_code):
            last = HTTPModelError(f"{url} answered HTTP {resp.status_code}", http_status=resp.status_code)
            continue
        return _decode(resp, url)
    assert last is not None
    raise HTTPModelError(
        f"{last.message} (after {policy.retries + 1} attempts)", http_status=last.http_status
    )


class LoopLocalClient:
    """One ``httpx.AsyncClient`` per event loop (a client's connections belong to the loop that opened them)."""

    def __init__(self, **kwargs: Any) -> None:
        self._kwargs = kwargs
        self._client: httpx.AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def get(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop or self._client.is_closed:
            self._client = httpx.AsyncClient(**self._kwargs)
            self._loop = loop
        return self._client

    async def aclose(self) -> None:
        if self._client is not None and self._loop is asyncio.get_running_loop():
            await self._client.aclose()
        self._client = None
