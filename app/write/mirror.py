"""``VectorMirror``: the bulk path's in-memory copy of one vault's Dedup vectors, searched per batch.

Dedup needs each item's nearest current blocks of its layer. PostgreSQL finds them by an exact scan of the vault
below 5,000 blocks (a join of every item with every block: ~1-2 us a pair, 4.5 ms an item at 5,000 blocks) and
by one HNSW index scan per item above (~1 ms an item, approximate). An import writes thousands of batches into one
vault, so it keeps the vault's vectors here instead, and ``dedup_candidate_rows_v1`` returns the rows for the
pairs found with the cosines, ranking and cut of ``dedup_candidates_v3`` (plus the exact-hash hits, from the index).

How it searches, per layer: below ``MirrorConfig.exact_below`` rows, exactly, by one matrix product per batch
(onnxruntime's GEMM); from that size on, through an HNSW graph of the layer's vectors (faiss ``IndexHNSWFlat``,
inner product of unit vectors), as the database's own search goes approximate past its size. The exact product
grows with the vault (0.66 ms an item at 100,000 blocks, and the comparison of every score with the threshold
another 0.16); the graph costs ~0.16 ms an item to add and ~0.13 to search at any size. The graph's answers are
scored again exactly from the mirror's own vectors, so a pair's cosine is the same either way; what can differ
is a near block the graph misses (its recall at ``ef_search``). The add is off the batch's critical path: the
rows loaded since the last search (the tail: the previous batch's blocks) are searched exactly with the graph's
answers, then join the graph in the mirror's own thread (faiss releases the GIL) while the batch is judged,
written and committed; the next search waits for it (at 40-80k blocks it was half of the writer's main thread).

What it holds: every current chunk, summary, memory and unit block of the vault (the kinds Dedup compares), in
their layers, loaded before each batch from the blocks above the last id it has seen (``dedup_vectors_since_v2``:
the previous batch's blocks, and any other writer's). A block this import superseded leaves it (its row is zeroed
and marked dead; the graph keeps the node and its answers skip it); a block it merged into takes a new row with
the new vector and its old row dies. A block another writer merges into or supersedes meanwhile keeps its old vector here; the rows come
back from the table as they are now, so such a block is at worst a candidate ranked on its old vector (an HNSW scan
is approximate too). ``spare`` extra pairs per item cover the blocks the database no longer counts as current.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import psycopg

from app.db.queries import Q
from app.write.batch import LAYERS

# Items per matrix product: 64 items x 100k blocks of float32 scores is 25 MB.
_ITEMS_PER_PRODUCT = 64
# Queries from which a graph search is split in two, half in the mirror's thread (fewer: not worth a hand-off).
_SPLIT_FROM = 32
# The mirror's cosine is float32 numpy, the database's pgvector's: a pair this close under the threshold is
# still sent, and the database's own cosine decides.
_SLACK = 1e-3


@dataclass(frozen=True, slots=True)
class MirrorConfig:
    # A layer's rows from which it is searched through its HNSW graph instead of exactly. At 20,000 rows the exact
    # product and its comparison cost ~0.16 ms an item, under what the graph's add and search cost (0.29 ms),
    # and a vault under it (every LoCoMo conversation, every LongMemEval haystack) is searched exactly.
    exact_below: int = 20_000
    # The graph's shape: M faiss's default (16), ef_construction pgvector's (64), ef_search wider than pgvector's
    # 40. On the 100k-memory import's vectors against the exact product (the 7 nearest at or above 0.749 of every
    # 25th item past 20,000) the graph missed 1 pair of 798; add 0.16 ms an item (0.10 at ef_construction 40),
    # search 0.13. The import's decisions, against every search exact: 0 of 100,000 differ (1 at 40).
    m: int = 16
    ef_construction: int = 64
    ef_search: int = 64
    # Nodes asked from the graph beyond the k wanted: the dead rows (superseded, merged) it may return first.
    extra: int = 8


class _Layer:
    """One Dedup layer's vectors (chunks; summaries; or memories and units), unit rows; a dead row (a block no longer current,
    or an old vector of a merged block) is zero (its score 0 is under any threshold) and ``alive`` False."""

    def __init__(self, dim: int) -> None:
        self.vecs = np.zeros((0, dim), dtype=np.float32)
        self.ids = np.zeros(0, dtype=np.int64)
        self.alive = np.zeros(0, dtype=bool)
        self.n = 0
        self.graph: Any = None  # faiss IndexHNSWFlat over rows 0..in_graph-1 (its labels are row numbers)
        # Rows given to the graph: those after it (the tail, the blocks loaded since the last search) are
        # searched exactly, and join the graph in the mirror's thread after each search (see VectorMirror.nearest).
        self.in_graph = 0
        self._adding: Future[None] | None = None  # the tail's add in flight: the graph is not read meanwhile

    def append(self, ids: np.ndarray, vecs: np.ndarray, rows: dict[int, tuple[_Layer, int]]) -> None:
        need = self.n + len(ids)
        if need > len(self.ids):
            cap = max(need, 2 * len(self.ids), 1024)
            self.vecs, self.ids, self.alive = _grow(self.vecs, cap), _grow(self.ids, cap), _grow(self.alive, cap)
        self.vecs[self.n:need] = vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
        self.ids[self.n:need] = ids
        self.alive[self.n:need] = True
        for k, block_id in enumerate(ids.tolist()):
            rows[block_id] = (self, self.n + k)
        self.n = need

    def kill(self, row: int) -> None:
        self.vecs[row] = 0.0
        self.alive[row] = False

    def index(self, config: MirrorConfig) -> None:
        """Start the layer's graph (the layer has reached ``exact_below``); its rows so far join it after the next
        search, as every later row does (:meth:`grow`)."""
        faiss = _faiss()
        graph = faiss.IndexHNSWFlat(self.vecs.shape[1], config.m, faiss.METRIC_INNER_PRODUCT)
        graph.hnsw.efConstruction = config.ef_construction
        graph.hnsw.efSearch = config.ef_search
        self.graph = graph

    def _search(self, q: np.ndarray, want: int, pool: ThreadPoolExecutor | None) -> tuple[np.ndarray, np.ndarray]:
        """The graph's ``want`` nearest nodes of each query; half the queries in ``pool``'s thread at the same time
        (faiss searches each query on its own, so the answers are the same; the search was a quarter of the
        critical thread once the adds left it)."""
        half = len(q) // 2
        if pool is None or half < _SPLIT_FROM:
            return self.graph.search(q, want)
        other = pool.submit(self.graph.search, q[half:], want)
        sims, found = self.graph.search(q[:half], want)
        sims_b, found_b = other.result()
        return np.concatenate([sims, sims_b]), np.concatenate([found, found_b])

    def settle(self) -> None:
        """Wait for the tail's add in flight (the graph is searched only when no add runs)."""
        if self._adding is not None:
            adding, self._adding = self._adding, None
            adding.result()

    def grow(self, pool: ThreadPoolExecutor) -> None:
        """Add the tail to the graph in ``pool``'s thread, while the batch goes on (the add was half of the bulk
        path's critical thread at 100k blocks, there). The rows are added in the order they came, as one add per
        search, so the graph is the same from one run to the next."""
        if self.graph is None or self.in_graph == self.n:
            return
        self.settle()
        self._adding = pool.submit(self.graph.add, self.vecs[self.in_graph:self.n].copy())
        self.in_graph = self.n

    def exact(self, q: np.ndarray, k: int, floor: float) -> tuple[np.ndarray, np.ndarray]:
        """(row in q, row in the layer) of each query's k best rows at or above ``floor``, by full products."""
        return _top(_scores(q, self.vecs[: self.n]), k, floor)

    def approximate(self, q: np.ndarray, k: int, floor: float, extra: int,
                    pool: ThreadPoolExecutor | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The same through the graph and the tail: the graph's nearest nodes, scored again exactly, with every
        row of the tail (scored exactly too), dead rows skipped. A query whose answer was cut short by dead rows
        (fewer than k left, the graph's last node still above the floor) asks the graph again for more. The
        caller settles the graph's add first; ``pool`` (the mirror's idle thread) searches half the queries."""
        graph_n = self.in_graph
        tail = np.arange(graph_n, self.n)
        tail_scores = _scores(q, self.vecs[graph_n:self.n]) if len(tail) else np.zeros((len(q), 0), np.float32)
        tail_scores[:, ~self.alive[graph_n:self.n]] = -np.inf
        want = min(k + extra, graph_n)
        out_r: list[np.ndarray] = []
        out_c: list[np.ndarray] = []
        todo = np.arange(len(q))
        while len(todo):
            sims, found = self._search(q[todo], want, pool)
            full = (found[:, -1] >= 0) & (sims[:, -1] >= floor)  # the answers went on above the floor
            found = np.sort(found, axis=1)  # equal scores ranked by row, as the exact product ranks them
            safe = np.where(found >= 0, found, 0)
            scores = np.einsum("ij,ikj->ik", q[todo], self.vecs[safe])
            usable = (found >= 0) & self.alive[safe]
            scores = np.where(usable, scores, -np.inf)
            # The tail's rows come after every node of the graph: the columns stay in row order for ties.
            found = np.concatenate([found, np.broadcast_to(tail, (len(todo), len(tail)))], axis=1)
            r, c = _top(np.concatenate([scores, tail_scores[todo]], axis=1), k, floor)
            short = np.bincount(r, minlength=len(todo)) < k
            # Cut short: dead rows among the answers, and the graph's last answer still above the floor.
            again = short & (~usable).any(axis=1) & full & (want < graph_n)
            done = ~again[r]
            out_r.append(todo[r[done]])
            out_c.append(found[r[done], c[done]])
            todo = todo[again]
            want = min(4 * want, graph_n)
        r, c = np.concatenate(out_r), np.concatenate(out_c)
        order = np.argsort(r, kind="stable")
        return r[order], c[order]


class VectorMirror:
    def __init__(self, dim: int, config: MirrorConfig = MirrorConfig()) -> None:
        self.dim = dim
        self.config = config
        self._layers = {name: _Layer(dim) for name in LAYERS}  # Dedup's layers (app/write/batch.py)
        self._row: dict[int, tuple[_Layer, int]] = {}
        self.after = 0  # the highest block id loaded
        # Bumped by every change of what the mirror holds; the last search's answer serves the same question
        # asked again while it stands (see :meth:`nearest`).
        self.version = 0
        self._last: tuple[Any, ...] | None = None
        self.searches = 0  # questions searched (not answered from the last answer): for tests and timing
        self._pool: ThreadPoolExecutor | None = None  # one thread: the graphs' adds, in order (made on first use)

    def __len__(self) -> int:
        return sum(int(layer.alive[: layer.n].sum()) for layer in self._layers.values())

    @property
    def approximate(self) -> bool:
        """Is any layer searched through its graph?"""
        return any(layer.graph is not None for layer in self._layers.values())

    async def refresh(self, conn: psycopg.AsyncConnection, vault_id: object) -> int:
        """Load the vault's current blocks above the last id seen; returns how many."""
        cur = await conn.execute(Q.dedup_vectors_since, (vault_id, self.after), binary=True)
        rows = [r for r in await cur.fetchall() if int(r["id"]) not in self._row]
        if not rows:
            return 0
        for name, layer in self._layers.items():
            mine = [r for r in rows if r["layer"] == name]
            if mine:
                layer.append(np.fromiter((r["id"] for r in mine), dtype=np.int64, count=len(mine)),
                             np.stack([_array(r["embedding"]) for r in mine]), self._row)
                if layer.graph is None and layer.n >= self.config.exact_below:
                    layer.index(self.config)
        self.after = max(self.after, max(int(r["id"]) for r in rows))
        self.version += 1
        return len(rows)

    def superseded(self, block_id: int) -> None:
        hit = self._row.get(block_id)
        if hit is not None:
            self.version += 1
            layer, row = hit
            layer.kill(row)

    def merged(self, block_id: int, vector: np.ndarray) -> None:
        hit = self._row.get(block_id)
        if hit is not None:
            self.version += 1
            layer, row = hit
            layer.kill(row)
            layer.append(np.asarray([block_id], dtype=np.int64),
                         np.asarray(vector, dtype=np.float32).reshape(1, -1), self._row)

    def nearest(self, vectors: Sequence[np.ndarray], layers: Sequence[str], k: int,
                min_cosine: float) -> tuple[list[int], list[int]]:
        """(items, block ids): for each item (1-based), up to ``k`` nearest current blocks of its layer (``layers``:
        each item's, 'chunk', 'summary' or 'curated') at or above ``min_cosine`` (less the float slack), as parallel
        lists.

        A batch is often decided two or three times with the mirror unchanged in between (a MERGE's new text needs
        its vector: the locked attempt rolls back, the batch is rehearsed outside the lock, then decided again:
        app/write/serial.py): the same question (the same vector objects, layers, k and floor) asked again before
        the mirror changes gets the previous answer instead of a second search (a third of the bulk path's
        Dedup time at 20,000 memories, where most batches hold a merge)."""
        key = (self.version, tuple(layers), k, min_cosine)
        last = self._last
        if (last is not None and last[0] == key and len(last[1]) == len(vectors)
                and all(a is b for a, b in zip(last[1], vectors, strict=True))):
            return list(last[2]), list(last[3])
        items: list[int] = []
        ids: list[int] = []
        if not len(vectors):
            return items, ids
        self.searches += 1
        q = np.asarray(np.stack(vectors), dtype=np.float32)
        q /= np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-12)
        which_layer = np.asarray(layers)
        floor = min_cosine - _SLACK
        for want, layer in self._layers.items():
            which = np.flatnonzero(which_layer == want)
            if not layer.n or not len(which):
                continue
            layer.settle()
            if layer.graph is not None and layer.in_graph:
                r, c = layer.approximate(np.ascontiguousarray(q[which]), k, floor, self.config.extra, self._adder())
                items.extend((which[r] + 1).tolist())
                ids.extend(layer.ids[c].tolist())
                continue
            for start in range(0, len(which), _ITEMS_PER_PRODUCT):
                part = which[start:start + _ITEMS_PER_PRODUCT]
                r, c = layer.exact(q[part], k, floor)
                items.extend((part[r] + 1).tolist())
                ids.extend(layer.ids[c].tolist())
        self._last = (key, list(vectors), items, ids)  # holds the vectors: their identity is the question's
        for layer in self._layers.values():
            if layer.graph is not None:
                layer.grow(self._adder())
        return list(items), list(ids)

    def settle(self) -> None:
        """Wait for the graphs' adds in flight (tests; a search waits by itself)."""
        for layer in self._layers.values():
            layer.settle()

    def _adder(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="mirror-graph", initializer=_one_faiss_thread)
        return self._pool


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


@lru_cache(maxsize=1)
def _faiss():  # noqa: ANN202 - the faiss module
    import faiss

    # One thread: the writer's other threads (the next batch's embedding, its gates) use the other core, and
    # OpenMP's spinning threads would take it from them.
    faiss.omp_set_num_threads(1)
    return faiss


def _one_faiss_thread() -> None:
    """OpenMP's thread count is per calling thread: the adder's own is set to one too (see :func:`_faiss`)."""
    _faiss().omp_set_num_threads(1)


def _array(v: object) -> np.ndarray:
    """A vector as pgvector's binary loader gives it (``Vector``), as float32."""
    to_numpy = getattr(v, "to_numpy", None)
    return np.asarray(to_numpy() if to_numpy is not None else v, dtype=np.float32)


def _grow(a: np.ndarray, cap: int) -> np.ndarray:
    out = np.zeros((cap, *a.shape[1:]), dtype=a.dtype)
    out[: len(a)] = a
    return out
