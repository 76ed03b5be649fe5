"""A BERT-family encoder written in MLX, loaded from a local Hugging Face directory.

Reads ``config.json`` (``model_type`` bert / roberta / xlm-roberta), ``*.safetensors`` (through ``mx.load``) and
``tokenizer.json`` (through the ``tokenizers`` library). Shared by the MLX embedder (mean or CLS pooling) and the
MLX cross-encoder reranker (pooler + classifier head). Module names mirror the Hugging Face checkpoints, so the
weights load by name; ``bert.``/``roberta.`` prefixes and old ``gamma``/``beta`` LayerNorm names are handled.

Only ``import mlx`` when this module is imported: keep it behind the registry's lazy imports.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import mlx.core as mx
import mlx.nn as nn

from app.errors import ConfigError
from app.models.hf_files import encode_batch, load_tokenizer, max_length_for, pooling_mode

__all__ = [
    "BertConfig",
    "BertModel",
    "CrossEncoder",
    "encode_batch",
    "load_cross_encoder",
    "load_encoder",
    "load_tokenizer",
    "max_length_for",
    "pooling_mode",
]


@dataclass(frozen=True)
class BertConfig:
    model_type: str
    vocab_size: int
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    intermediate_size: int
    max_position_embeddings: int
    type_vocab_size: int
    layer_norm_eps: float
    hidden_act: str
    pad_token_id: int
    num_labels: int

    @property
    def is_roberta(self) -> bool:
        return self.model_type in ("roberta", "xlm-roberta", "camembert")

    @classmethod
    def from_dir(cls, path: Path) -> BertConfig:
        raw = json.loads((path / "config.json").read_text())
        model_type = raw.get("model_type", "bert")
        if model_type not in ("bert", "roberta", "xlm-roberta", "camembert"):
            raise ConfigError(f"{path}: model_type {model_type!r} is not a BERT-family encoder")
        id2label = raw.get("id2label") or {}
        return cls(
            model_type=model_type,
            vocab_size=raw["vocab_size"],
            hidden_size=raw["hidden_size"],
            num_hidden_layers=raw["num_hidden_layers"],
            num_attention_heads=raw["num_attention_heads"],
            intermediate_size=raw["intermediate_size"],
            max_position_embeddings=raw.get("max_position_embeddings", 512),
            type_vocab_size=raw.get("type_vocab_size", 2),
            layer_norm_eps=raw.get("layer_norm_eps", 1e-12),
            hidden_act=raw.get("hidden_act", "gelu"),
            pad_token_id=raw.get("pad_token_id", 0 if model_type == "bert" else 1),
            num_labels=raw.get("num_labels", len(id2label) or 1),
        )


def _act(name: str):
    if name in ("gelu", "gelu_python"):
        return nn.gelu
    if name in ("gelu_new", "gelu_pytorch_tanh", "gelu_fast"):
        return nn.gelu_approx
    if name == "relu":
        return nn.relu
    raise ConfigError(f"unsupported hidden_act {name!r}")


class Embeddings(nn.Module):
    def __init__(self, c: BertConfig) -> None:
        super().__init__()
        self.word_embeddings = nn.Embedding(c.vocab_size, c.hidden_size)
        self.position_embeddings = nn.Embedding(c.max_position_embeddings, c.hidden_size)
        self.token_type_embeddings = nn.Embedding(c.type_vocab_size, c.hidden_size)
        self.LayerNorm = nn.LayerNorm(c.hidden_size, eps=c.layer_norm_eps)
        self._roberta = c.is_roberta
        self._pad = c.pad_token_id

    def __call__(self, ids: mx.array, token_types: mx.array, mask: mx.array) -> mx.array:
        if self._roberta:  # positions count from padding_idx + 1 over real tokens
            positions = (mx.cumsum(mask, axis=1) * mask + self._pad).astype(mx.int32)
        else:
            positions = mx.broadcast_to(mx.arange(ids.shape[1]), ids.shape)
        h = (
            self.word_embeddings(ids)
            + self.position_embeddings(positions)
            + self.token_type_embeddings(token_types)
        )
        return self.LayerNorm(h)


class SelfAttention(nn.Module):
    def __init__(self, c: BertConfig) -> None:
        super().__init__()
        self.query = nn.Linear(c.hidden_size, c.hidden_size)
        self.key = nn.Linear(c.hidden_size, c.hidden_size)
        self.value = nn.Linear(c.hidden_size, c.hidden_size)
        self.heads = c.num_attention_heads


class AttentionOutput(nn.Module):
    def __init__(self, c: BertConfig) -> None:
        super().__init__()
        self.dense = nn.Linear(c.hidden_size, c.hidden_size)
        self.LayerNorm = nn.LayerNorm(c.hidden_size, eps=c.layer_norm_eps)


class Attention(nn.Module):
    def __init__(self, c: BertConfig) -> None:
        super().__init__()
        setattr(self, "self", SelfAttention(c))  # the checkpoint's name is attention.self.*
        self.output = AttentionOutput(c)

    def __call__(self, h: mx.array, bias: mx.array) -> mx.array:
        att: SelfAttention = getattr(self, "self")
        b, n, d = h.shape
        heads = att.heads

        def split(x: mx.array) -> mx.array:
            return x.reshape(b, n, heads, d // heads).transpose(0, 2, 1, 3)

        q, k, v = split(att.query(h)), split(att.key(h)), split(att.value(h))
        ctx = mx.fast.scaled_dot_product_attention(q, k, v, scale=(d // heads) ** -0.5, mask=bias)
        ctx = ctx.transpose(0, 2, 1, 3).reshape(b, n, d)
        return self.output.LayerNorm(self.output.dense(ctx) + h)


class Intermediate(nn.Module):
    def __init__(self, c: BertConfig) -> None:
        super().__init__()
        self.dense = nn.Linear(c.hidden_size, c.intermediate_size)


class Output(nn.Module):
    def __init__(self, c: BertConfig) -> None:
        super().__init__()
        self.dense = nn.Linear(c.intermediate_size, c.hidden_size)
        self.LayerNorm = nn.LayerNorm(c.hidden_size, eps=c.layer_norm_eps)


class Layer(nn.Module):
    def __init__(self, c: BertConfig) -> None:
        super().__init__()
        self.attention = Attention(c)
        self.intermediate = Intermediate(c)
        self.output = Output(c)
        self._act = _act(c.hidden_act)

    def __call__(self, h: mx.array, bias: mx.array) -> mx.array:
        h = self.attention(h, bias)
        inner = self._act(self.intermediate.dense(h))
        return self.output.LayerNorm(self.output.dense(inner) + h)


class Encoder(nn.Module):
    def __init__(self, c: BertConfig) -> None:
        super().__init__()
        self.layer = [Layer(c) for _ in range(c.num_hidden_layers)]


class Pooler(nn.Module):
    def __init__(self, c: BertConfig) -> None:
        super().__init__()
        self.dense = nn.Linear(c.hidden_size, c.hidden_size)


class BertModel(nn.Module):
    def __init__(self, c: BertConfig, *, with_pooler: bool = False) -> None:
        super().__init__()
        self.config = c
        self.embeddings = Embeddings(c)
        self.encoder = Encoder(c)
        if with_pooler:
            self.pooler = Pooler(c)

    def __call__(self, ids: mx.array, mask: mx.array, token_types: mx.array | None = None) -> mx.array:
        """Last hidden states, (batch, seq, hidden)."""
        if token_types is None:
            token_types = mx.zeros_like(ids)
        h = self.embeddings(ids, token_types, mask)
        bias = ((1.0 - mask.astype(h.dtype)) * -1e9)[:, None, None, :]
        for layer in self.encoder.layer:
            h = layer(h, bias)
        return h


class ClassifierHead(nn.Module):
    """BERT: pooler(tanh) + ``classifier``; RoBERTa: ``classifier.dense`` + tanh + ``classifier.out_proj``."""

    def __init__(self, c: BertConfig) -> None:
        super().__init__()
        self._roberta = c.is_roberta
        if self._roberta:
            self.dense = nn.Linear(c.hidden_size, c.hidden_size)
            self.out_proj = nn.Linear(c.hidden_size, c.num_labels)
        else:
            self.weight = mx.zeros((c.num_labels, c.hidden_size))
            self.bias = mx.zeros((c.num_labels,))


class CrossEncoder(nn.Module):
    def __init__(self, c: BertConfig) -> None:
        super().__init__()
        self.bert = BertModel(c, with_pooler=not c.is_roberta)
        self.classifier = ClassifierHead(c)

    def __call__(self, ids: mx.array, mask: mx.array, token_types: mx.array) -> mx.array:
        h = self.bert(ids, mask, token_types)
        cls = h[:, 0]
        head = self.classifier
        if self.bert.config.is_roberta:
            return head.out_proj(mx.tanh(head.dense(cls)))
        pooled = mx.tanh(self.bert.pooler.dense(cls))
        return pooled @ head.weight.T + head.bias


def _rename(key: str) -> str:
    for prefix in ("bert.", "roberta.", "model."):
        if key.startswith(prefix):
            key = key[len(prefix) :]
            break
    return key.replace("LayerNorm.gamma", "LayerNorm.weight").replace("LayerNorm.beta", "LayerNorm.bias")


def load_weights(path: Path) -> dict[str, mx.array]:
    files = sorted(path.glob("*.safetensors"))
    if not files:
        raise ConfigError(f"{path}: no *.safetensors file")
    weights: dict[str, mx.array] = {}
    for f in files:
        weights.update(mx.load(str(f)))
    return weights


def load_encoder(path: Path) -> BertModel:
    c = BertConfig.from_dir(path)
    model = BertModel(c)
    raw = load_weights(path)
    weights = {
        _rename(k): v
        for k, v in raw.items()
        if not k.startswith(("pooler.", "bert.pooler.", "roberta.pooler.", "classifier.", "cls.", "lm_head."))
        and "position_ids" not in k
    }
    model.load_weights(list(weights.items()), strict=True)
    mx.eval(model.parameters())
    return model


def load_cross_encoder(path: Path) -> CrossEncoder:
    c = BertConfig.from_dir(path)
    model = CrossEncoder(c)
    weights: dict[str, mx.array] = {}
    for k, v in load_weights(path).items():
        if "position_ids" in k or k.startswith(("cls.", "lm_head.")):
            continue
        if k.startswith("classifier."):
            weights[k] = v
        else:
            weights["bert." + _rename(k)] = v
    model.load_weights(list(weights.items()), strict=True)
    mx.eval(model.parameters())
    return model
