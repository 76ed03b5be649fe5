"""``openai``: any OpenAI-compatible chat server (Ollama, vLLM, llama.cpp, LM Studio, OpenAI).

Structured output is negotiated: the first call asks for ``response_format: {type: json_schema}``; a server that
rejects it (HTTP 400/422) is asked again with ``{type: json_object}``, then with no response_format at all, and
the mode that worked is remembered for later calls. The prompt always carries the schema too, so plain mode still
gets JSON from a cooperative model; near-JSON is repaired (:mod:`app.models.jsonrepair`).
Timeouts are per attempt; timeouts, connection errors, 429 and 5xx are retried with exponential backoff.
"""

from __future__ import annotations

from typing import Any, Literal

import httpx

from app.models.breaker import CircuitBreaker
from app.models.http import HTTPModelError, LoopLocalClient, RetryPolicy, apost_json, endpoint
from app.models.llms.structured import StructuredLLM
from app.models.tasks.base import Task

JsonMode = Literal["json_schema", "json_object", "none"]
_MODES: tuple[JsonMode, ...] = ("json_schema", "json_object", "none")


class OpenAILLM(StructuredLLM):
    name = "openai"

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        breaker: CircuitBreaker,
        api_key: str | None = None,
        timeout_s: float = 30.0,
        retries: int = 2,
        backoff_s: float = 0.5,
        temperature: float | None = None,
        json_mode: JsonMode = "json_schema",
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        super().__init__(breaker=breaker)
        self.url = endpoint(base_url, "/v1/chat/completions")
        self.model = model
        self.api_key = api_key
        self.timeout_s = timeout_s
        self.policy = RetryPolicy(retries=retries, backoff_s=backoff_s)
        self.temperature = temperature
        self.json_mode: JsonMode = json_mode
        self._client = LoopLocalClient(transport=transport) if transport else LoopLocalClient()

    def _body(
        self, task: Task[Any, Any], messages: list[dict[str, str]], schema: dict[str, Any], mode: JsonMode
    ):
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": task.temperature if self.temperature is None else self.temperature,
            "max_tokens": task.max_tokens,
            "stream": False,
        }
        if mode == "json_schema":
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": task.name, "schema": schema, "strict": False},
            }
        elif mode == "json_object":
            body["response_format"] = {"type": "json_object"}
        return body

    async def _complete(
        self, task: Task[Any, Any], messages: list[dict[str, str]], schema: dict[str, Any]
    ) -> str:
        modes = _MODES[_MODES.index(self.json_mode) :]
        for i, mode in enumerate(modes):
            try:
                data = await apost_json(
                    self._client.get(),
                    self.url,
                    self._body(task, messages, schema, mode),
                    policy=self.policy,
                    timeout_s=self.timeout_s,
                    api_key=self.api_key,
                )
            except HTTPModelError as exc:
                rejected = exc.http_status in (400, 422) and mode != "none"
                if rejected and i + 1 < len(modes):
                    continue  # this server may not take that response_format: try the next one
                raise
            self.json_mode = mode  # remembered only once a mode has worked
            return _content(data, self.url)
        raise AssertionError("unreachable")

    async def aclose(self) -> None:
        await self._client.aclose()


def _content(data: Any, url: str) -> str:
    try:
        message = data["choices"][0]["message"]
    except (KeyError, IndexError, TypeError) as exc:
        raise HTTPModelError(f"{url}: no choices[0].message in reply: {str(data)[:200]}") from exc
    content = message.get("content")
    if isinstance(content, list):  # some servers return content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    if not content:
        # Reasoning servers may put everything in reasoning_content when max_tokens runs out.
        content = message.get("reasoning_content") or ""
    if not isinstance(content, str):
        raise HTTPModelError(f"{url}: message content is not text")
    return content
