"""``mlx``: a cross-encoder (BERT/RoBERTa + classification head) from a local directory, run in MLX.

Scores are the raw logit of the single label (or of the last label for two-label heads: "relevant"). On Linux
CPU this is slow (see DESIGN.md 4); it is the Apple-silicon path. Behind the circuit breaker; the scoring runs in
the service's model pool (``calls``: :class:`~app.models.calls.ModelCalls`), never on the event loop and never in
a thread of asyncio's own unsized executor.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from app.models.base import Reranker
from app.models.breaker import CircuitBreaker

if TYPE_CHECKING:
    from app.models.calls import ModelCalls


class MLXCrossEncoder(Reranker):
    batch_size = 16

    def __init__(self, model_path: Path, *, breaker: CircuitBreaker, calls: ModelCalls,
                 timeout_s: float = 30.0) -> None:
        from app.models import mlx_bert
        from app.models.llms.mlx import check_model_dir

        self.path = check_model_dir(Path(model_path), "mlx reranker")
        self._model = mlx_bert.load_cross_encoder(self.path)
        c = self._model.bert.config
        limit = c.max_position_embeddings - (2 if c.is_roberta else 0)
        self._tokenizer = mlx_bert.load_tokenizer(self.path, limit)
        self.name = f"mlx:{self.path.name}"
        self.breaker = breaker
        self.timeout_s = timeout_s
        self.calls = calls
        self._lock = threading.Lock()

    def score_sync(self, query: str, texts: Sequence[str]) -> list[float]:
        import mlx.core as mx

        from app.models.hf_files import encode_batch

        out: list[float] = []
        texts = list(texts)
        for i in range(0, len(texts), self.batch_size):
            chunk = texts[i : i + self.batch_size]
            ids, mask, types = encode_batch(self._tokenizer, [query] * len(chunk), chunk)
            with self._lock:
                logits = np.array(
                    self._model(mx.array(ids), mx.array(mask), mx.array(types)).astype(mx.float32)
                )
            out += logits[:, -1].tolist()
        return out

    async def score(self, query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        with self.breaker.guard():
            return await asyncio.wait_for(self.calls.run(self.score_sync, query, texts), self.timeout_s)
