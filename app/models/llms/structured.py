"""What every model-backed LLM shares: build the task's messages, get text back, parse and validate it, fall back
to the heuristic twin on any failure, and count what happened.

A backend implements only :meth:`StructuredLLM._complete` (messages + JSON schema -> reply text), raising
:class:`~app.errors.ModelError` when the backend fails. Parsing, validation, the breaker and the counters live here
once, so the openai and mlx backends behave the same.
"""

from __future__ import annotations

import abc
import asyncio
import json
import logging
import threading
from collections import defaultdict
from typing import Any

from pydantic import ValidationError

from app.errors import CircuitOpen, ModelError
from app.models.base import LLM, I, O, TaskResult
from app.models.breaker import CircuitBreaker
from app.models.jsonrepair import parse_json_reply
from app.models.tasks.base import Task

log = logging.getLogger(__name__)

COUNTERS = ("calls", "model_ok", "repaired", "invalid_output", "errors", "short_circuits", "heuristic")


class LLMStats:
    """Per-task counters. ``invalid_output`` + ``errors`` + ``short_circuits`` = fallbacks to the heuristic."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_task: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(COUNTERS, 0))

    def bump(self, task_id: str, counter: str) -> None:
        with self._lock:
            self._by_task[task_id][counter] += 1

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            by_task = {k: dict(v) for k, v in self._by_task.items()}
        totals = dict.fromkeys(COUNTERS, 0)
        for counts in by_task.values():
            for k, v in counts.items():
                totals[k] += v
        return {"totals": totals, "by_task": by_task}


class HeuristicLLM(LLM):
    """The offline default: every task answered by its deterministic heuristic twin (documented per task)."""

    name = "heuristic"
    instant = True  # deterministic rules: no model, no I/O (the write track may ask it under its lock)

    def __init__(self) -> None:
        self._stats = LLMStats()

    async def run_traced(self, task: Task[I, O], payload: I) -> TaskResult[O]:
        return TaskResult(output=self.run_instant(task, payload), source="heuristic")

    def run_instant(self, task: Task[I, O], payload: I) -> O:
        self._stats.bump(task.id, "calls")
        self._stats.bump(task.id, "heuristic")
        return task.heuristic(payload)

    def stats(self) -> dict[str, Any]:
        return {"backend": self.name, **self._stats.snapshot()}


class StructuredLLM(LLM):
    """Base of the model-backed LLMs (openai, mlx)."""

    def __init__(self, *, breaker: CircuitBreaker) -> None:
        self.breaker = breaker
        self._stats = LLMStats()

    @abc.abstractmethod
    async def _complete(
        self, task: Task[Any, Any], messages: list[dict[str, str]], schema: dict[str, Any]
    ) -> str:
        """The model's reply text. Raise ModelError on backend failure."""

    async def run_traced(self, task: Task[I, O], payload: I) -> TaskResult[O]:
        self._stats.bump(task.id, "calls")
        try:
            self.breaker.acquire()
        except CircuitOpen as exc:
            self._stats.bump(task.id, "short_circuits")
            return self._fallback(task, payload, "circuit_open", str(exc))
        try:
            text = await self._complete(task, task.messages(payload), task.json_schema())
        except asyncio.CancelledError:
            self.breaker.release()
            raise
        except Exception as exc:  # the backend failed: count it on the breaker, answer with the heuristic
            self.breaker.record_failure(exc)
            self._stats.bump(task.id, "errors")
            log.warning("llm %s task %s failed: %s", self.name, task.id, exc)
            return self._fallback(task, payload, "error", f"{type(exc).__name__}: {exc}")
        self.breaker.record_success()
        try:
            output, repaired = self.parse(task, payload, text)
        except (ValueError, ValidationError) as exc:
            self._stats.bump(task.id, "invalid_output")
            log.info("llm %s task %s: invalid output (%s): %.200r", self.name, task.id, exc, text)
            return self._fallback(task, payload, "invalid_output", str(exc)[:300])
        self._stats.bump(task.id, "model_ok")
        if repaired:
            self._stats.bump(task.id, "repaired")
        return TaskResult(output=output, source="model", detail="repaired JSON" if repaired else None)

    @staticmethod
    def parse(task: Task[I, O], payload: I, text: str) -> tuple[O, bool]:
        """Reply text -> (validated output, whether the JSON needed repair). Raises ValueError / ValidationError."""
        try:
            data, repaired = json.loads(text), False
        except (json.JSONDecodeError, TypeError):
            data, repaired = parse_json_reply(text), True
        return task.validate_output(payload, data), repaired

    def _fallback(self, task: Task[I, O], payload: I, reason: Any, detail: str) -> TaskResult[O]:
        self._stats.bump(task.id, "heuristic")
        return TaskResult(
            output=task.heuristic(payload), source="heuristic", fallback_reason=reason, detail=detail
        )

    def stats(self) -> dict[str, Any]:
        return {"backend": self.name, "breaker": self.breaker.snapshot(), **self._stats.snapshot()}


__all__ = ["COUNTERS", "HeuristicLLM", "LLMStats", "ModelError", "StructuredLLM"]
