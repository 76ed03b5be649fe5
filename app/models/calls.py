"""``ModelCalls``: the one async seam for model work that would block the event loop.

An embedder is synchronous (CPU-bound, or an HTTP client with a 10 s timeout and retries): called on the event loop,
one slow embedding stalls every request of the API process (``/health`` included). Every such call goes through
here instead: it runs in a thread pool of ``settings.model_threads`` workers, owned by ``Services`` (and shut down
with it), while the loop serves other requests. The reranker and LLM protocols are asynchronous already; a backend
of theirs that computes locally hands its blocking work to :meth:`ModelCalls.run`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import TypeVar

import numpy as np

from app.models.base import LLM, Embedder
from app.models.tasks.base import Task

R = TypeVar("R")
I = TypeVar("I")  # a task's input, as app/models/base.py names it
O = TypeVar("O")


class ModelCalls:
    def __init__(self, threads: int) -> None:
        self.threads = threads
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="memvault-model")

    async def run(self, fn: Callable[..., R], *args: object, **kwargs: object) -> R:
        """``fn(*args, **kwargs)`` in the model pool."""
        return await asyncio.get_running_loop().run_in_executor(self._pool, partial(fn, *args, **kwargs))

    async def embed_query(self, embedder: Embedder, text: str) -> np.ndarray:
        return await self.run(embedder.embed_query, text)

    async def embed_documents(self, embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
        return await self.run(embedder.embed_documents, list(texts))

    async def embed_queries(self, embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
        return await self.run(embedder.embed_queries, list(texts))

    async def llm(self, llm: LLM, task: Task[I, O], payload: I) -> O:
        """``task`` on ``payload``: an ``instant`` LLM's rules are CPU work in this process (a session close's
        extraction and summary: ~40 ms of it a session) and run in the pool, so the event loop keeps serving the
        other requests meanwhile (a writer holding its vault's lock among them: its next step waited for the whole
        extraction of another caller's close); a model-backed LLM's call is I/O, awaited on the loop."""
        if llm.instant:
            return await self.run(llm.run_instant, task, payload)
        return await llm.run(task, payload)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
