"""``VectorMirror``: the bulk path's in-memory copy of one vault's Dedup vectors, searched exactly per batch.

Dedup needs each item's nearest current blocks of its layer. PostgreSQL finds them by an exact scan of the vault
below 5,000 blocks (a join of every item with every block: ~1-2 us a pair, 4.5 ms an item at 5,000 blocks) and
by one HNSW index scan per item above (~1 ms an item, approximate). An import writes thousands of batches into one
vault, so it keeps the vault's vectors here instead: one matrix product per batch gives every item's exact
nearest blocks (0.2 ms an item at 25,000 blocks), and ``dedup_candidate_rows_v1`` returns the rows for those
pairs with the cosines, ranking and cut of ``dedup_candidates_v3`` (plus the exact-hash hits, from the index).

What it holds: every current chunk, memory and unit block of the vault (the kinds Dedup compares), loaded before
each batch from the blocks above the last id it has seen (``dedup_vectors_since_v1``: the previous batch's
blocks, and any other writer's), with the blocks this import superseded taken out and the ones it merged into
given their new vector. A block another writer merges into or supersedes meanwhile keeps its old vector here;
the rows come back from the table as they are now, so such a block is at worst a candidate ranked on its old
vector (an HNSW scan is approximate too). ``spare`` extra pairs per item cover the blocks the database no longer
counts as current.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import psycopg

from app.db.queries import Q

# Items per matrix product: 64 items x 100k blocks of float32 scores is 25 MB.
_ITEMS_PER_PRODUCT = 64
# The mirror's cosine is float32 numpy, the database's pgvector's: a pair this close under the threshold is
# still sent, and the database's own cosine decides.
_SLACK = 1e-3


class _Layer:
    """One Dedup layer's vectors (chunks; or memories and units), unit rows; a block no longer current is a zero
    row (its score 0 is under any threshold)."""

    def __init__(self, dim: int) -> None:
        self.vecs = np.zeros((0, dim), dtype=np.float32)
        self.ids = np.zeros(0, dtype=np.int64)
        self.n = 0

    def append(self, ids: np.ndarray, vecs: np.ndarray, rows: dict[int, tuple[_Layer, int]]) -> None:
        need = self.n + len(ids)
        if need > len(self.ids):
            cap = max(need, 2 * len(self.ids), 1024)
            self.vecs, self.ids = _grow(self.vecs, cap), _grow(self.ids, cap)
        self.vecs[self.n:need] = vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
        self.ids[self.n:need] = ids
        for k, block_id in enumerate(ids.tolist()):
            rows[block_id] = (self, self.n + k)
        self.n = need


class VectorMirror:
    def __init__(self, dim: int) -> None:
        self.dim = dim
        self._layers = {True: _Layer(dim), False: _Layer(dim)}  # chunk layer, curated layer
        self._row: dict[int, tuple[_Layer, int]] = {}
        self.after = 0  # the highest block id loaded

    def __len__(self) -> int:
        return sum(layer.n for layer in self._layers.values())

    async def refresh(self, conn: psycopg.AsyncConnection, vault_id: object) -> int:
        """Load the vault's current blocks above the last id seen; returns how many."""
        cur = await conn.execute(Q.dedup_vectors_since, (vault_id, self.after), binary=True)
        rows = [r for r in await cur.fetchall() if int(r["id"]) not in self._row]
        if not rows:
            return 0
        for chunk, layer in self._layers.items():
            mine = [r for r in rows if bool(r["chunk"]) == chunk]
            if mine:
                layer.append(np.fromiter((r["id"] for r in mine), dtype=np.int64, count=len(mine)),
                             np.stack([_array(r["embedding"]) for r in mine]), self._row)
        self.after = max(self.after, max(int(r["id"]) for r in rows))
        return len(rows)

    def superseded(self, block_id: int) -> None:
        hit = self._row.get(block_id)
        if hit is not None:
            layer, row = hit
            layer.vecs[row] = 0.0

    def merged(self, block_id: int, vector: np.ndarray) -> None:
        hit = self._row.get(block_id)
        if hit is not None:
            layer, row = hit
            v = np.asarray(vector, dtype=np.float32)
            layer.vecs[row] = v / max(float(np.linalg.norm(v)), 1e-12)

    def nearest(self, vectors: Sequence[np.ndarray], chunk: Sequence[bool], k: int,
                min_cosine: float) -> tuple[list[int], list[int]]:
        """(items, block ids): for each item (1-based), up to ``k`` nearest current blocks of its layer at or above
        ``min_cosine`` (less the float slack), as parallel lists."""
        items: list[int] = []
        ids: list[int] = []
        if not len(vectors):
            return items, ids
        q = np.asarray(np.stack(vectors), dtype=np.float32)
        q /= np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-12)
        which_layer = np.asarray(chunk, dtype=bool)
        for want, layer in self._layers.items():
            which = np.flatnonzero(which_layer == want)
            if not layer.n or not len(which):
                continue
            block_vecs = layer.vecs[: layer.n]
            for start in range(0, len(which), _ITEMS_PER_PRODUCT):
                part = which[start:start + _ITEMS_PER_PRODUCT]
                r, c = _top(_scores(q[part], block_vecs), k, min_cosine - _SLACK)
                items.extend((part[r] + 1).tolist())
                ids.extend(layer.ids[c].tolist())
        return items, ids


def _top(scores: np.ndarray, k: int, floor: float) -> tuple[np.ndarray, np.ndarray]:
    """(row, column) of each row's ``k`` highest scores at or above ``floor``. Most pairs are far below the floor
    (Dedup's 0.75), so they are dropped first by one comparison: ranking whole rows (argpartition over 85k blocks)
    cost more than the product itself."""
    rows, cols = np.nonzero(scores >= floor)
    if not len(rows):
        return rows, cols
    order = np.lexsort((-scores[rows, cols], rows))  # by row, then score, highest first
    rows, cols = rows[order], cols[order]
    first = np.searchsorted(rows, rows)  # where each entry's row starts
    keep = np.arange(len(rows)) - first < k
    return rows[keep], cols[keep]


def _scores(q: np.ndarray, vecs: np.ndarray) -> np.ndarray:
    """``q @ vecs.T`` through onnxruntime's MLAS kernels (1.5x numpy's OpenBLAS, pinned to AVX2 here)."""
    return _gemm().run(None, {"q": np.ascontiguousarray(q), "v": vecs})[0]


@lru_cache(maxsize=1)
def _gemm():  # noqa: ANN202 - an onnxruntime InferenceSession
    import onnxruntime as ort
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Gemm", ["q", "v"], ["s"], transB=1)], "scores",
        [helper.make_tensor_value_info("q", TensorProto.FLOAT, [None, None]),
         helper.make_tensor_value_info("v", TensorProto.FLOAT, [None, None])],
        [helper.make_tensor_value_info("s", TensorProto.FLOAT, [None, None])])
    model = helper.make_model(graph, ir_version=9, opset_imports=[helper.make_opsetid("", 17)])
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.log_severity_level = 3
    return ort.InferenceSession(model.SerializeToString(), sess_options=opts, providers=["CPUExecutionProvider"])


def _array(v: object) -> np.ndarray:
    """A vector as pgvector's binary loader gives it (``Vector``), as float32."""
    to_numpy = getattr(v, "to_numpy", None)
    return np.asarray(to_numpy() if to_numpy is not None else v, dtype=np.float32)


def _grow(a: np.ndarray, cap: int) -> np.ndarray:
    out = np.zeros((cap, *a.shape[1:]), dtype=a.dtype)
    out[: len(a)] = a
    return out
