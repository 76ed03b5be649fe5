"""Files of a local Hugging Face model directory, without any ML runtime: ``tokenizer.json`` through the
``tokenizers`` library, sentence-transformers' pooling and length settings. Used by the MLX and ONNX backends."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from app.errors import ConfigError


def load_tokenizer(path: Path, max_length: int) -> Any:
    """``tokenizers.Tokenizer`` from a directory's ``tokenizer.json`` (or that file itself), truncating at
    ``max_length``; padding is done by :func:`encode_batch`."""
    from tokenizers import Tokenizer

    file = path if path.suffix == ".json" else path / "tokenizer.json"
    if not file.is_file():
        raise ConfigError(f"{path}: no tokenizer.json")
    tok = Tokenizer.from_file(str(file))
    tok.no_padding()
    tok.enable_truncation(max_length=max_length)
    return tok


def max_length_for(path: Path, config_max: int) -> int:
    """sentence-transformers' ``max_seq_length`` if present, else the model's position limit (RoBERTa: -2)."""
    st = path / "sentence_bert_config.json"
    if st.is_file():
        value = json.loads(st.read_text()).get("max_seq_length")
        if value:
            return int(value)
    return config_max


def encode_batch(tokenizer: Any, texts: list[str], pairs: list[str] | None = None) -> tuple[np.ndarray, ...]:
    """Token ids, attention mask and token types as int32 arrays, right-padded to the longest in the batch."""
    encs = tokenizer.encode_batch(list(zip(texts, pairs, strict=True)) if pairs is not None else texts)
    n = max(len(e.ids) for e in encs)
    pad_id = tokenizer.token_to_id("[PAD]")
    if pad_id is None:
        pad_id = tokenizer.token_to_id("<pad>") or 0
    ids = np.full((len(encs), n), pad_id, dtype=np.int32)
    mask = np.zeros((len(encs), n), dtype=np.int32)
    types = np.zeros((len(encs), n), dtype=np.int32)
    for i, e in enumerate(encs):
        ids[i, : len(e.ids)] = e.ids
        mask[i, : len(e.ids)] = e.attention_mask
        types[i, : len(e.ids)] = e.type_ids
    return ids, mask, types


def pooling_mode(path: Path) -> str:
    """``mean`` or ``cls``, from sentence-transformers' ``1_Pooling/config.json`` (default mean)."""
    cfg = path / "1_Pooling" / "config.json"
    if cfg.is_file():
        raw = json.loads(cfg.read_text())
        if raw.get("pooling_mode_cls_token"):
            return "cls"
    return "mean"
