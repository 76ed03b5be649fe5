"""The vector mirror's two searches (app/write/mirror.py): through its HNSW graph it answers what the exact
product answers on a layer small enough for the graph to find every node, dead rows (superseded blocks, a merged
block's old vector) skipped, even when they crowd out every node the graph was first asked for."""

from __future__ import annotations

import threading

import numpy as np

from app.write.mirror import MirrorConfig, VectorMirror


def _mirror(vectors: np.ndarray, exact_below: int, extra: int = 8) -> VectorMirror:
    # ef_search above the layer's size: the graph's search visits every node it can reach (exact here).
    mirror = VectorMirror(vectors.shape[1], MirrorConfig(exact_below=exact_below, extra=extra, ef_search=512))
    layer = mirror._layers["curated"]
    layer.append(np.arange(1, len(vectors) + 1, dtype=np.int64), vectors, mirror._row)
    if layer.n >= exact_below:
        layer.index(mirror.config)
    return mirror


def _pairs(mirror: VectorMirror, queries: np.ndarray, k: int, floor: float) -> list[tuple[int, int]]:
    items, ids = mirror.nearest(list(queries), ["curated"] * len(queries), k, floor)
    return list(zip(items, ids, strict=True))


def test_the_graph_answers_as_the_exact_product_with_dead_rows() -> None:
    rng = np.random.default_rng(7)
    centre = rng.normal(size=64).astype(np.float32)
    # 300 blocks, a third of them close to one centre: many pairs above the floor.
    vectors = rng.normal(size=(300, 64)).astype(np.float32)
    vectors[:100] = centre + 0.3 * rng.normal(size=(100, 64)).astype(np.float32)
    queries = np.concatenate([centre + 0.2 * rng.normal(size=(20, 64)), rng.normal(size=(5, 64))]).astype(np.float32)
    exact, graph = _mirror(vectors, exact_below=10_000), _mirror(vectors, exact_below=0, extra=2)
    assert graph.approximate and not exact.approximate
    assert _pairs(graph, queries, 5, 0.5) == _pairs(exact, queries, 5, 0.5)
    # Kill the 90 blocks nearest the centre (superseded), merge 5 others into new vectors: the graph's first
    # answers for a query near the centre are dead, so it must ask again for more.
    nearest = np.argsort(-(vectors[:100] @ centre) / np.linalg.norm(vectors[:100], axis=1))[:90] + 1
    merged = centre + 0.1 * rng.normal(size=(5, 64)).astype(np.float32)
    for mirror in (exact, graph):
        for block_id in nearest.tolist():
            mirror.superseded(block_id)
        for block_id, vector in zip(range(200, 205), merged, strict=True):
            mirror.merged(block_id, vector)
    dead = set(nearest.tolist())
    got = _pairs(graph, queries, 8, 0.5)
    assert got == _pairs(exact, queries, 8, 0.5)
    assert got and not dead & {block for _, block in got}
    assert {block for _, block in got} & set(range(200, 205))  # the merged blocks' new vectors are found
    assert len(graph) == len(exact) == 300 - 90


def test_the_graph_grows_in_the_mirrors_thread_and_its_tail_is_searched_exactly() -> None:
    """Rows appended to a layer searched through its graph join the graph after the next search, in the mirror's
    own thread (the add was half the bulk path's critical thread); until then that search finds them exactly."""
    rng = np.random.default_rng(11)
    vectors = rng.normal(size=(400, 32)).astype(np.float32)
    graph, exact = _mirror(vectors[:300], exact_below=0), _mirror(vectors[:300], exact_below=10_000)
    layer = graph._layers["curated"]
    threads: list[str] = []
    real_add = layer.graph.add
    layer.graph.add = lambda rows: (threads.append(threading.current_thread().name), real_add(rows))[1]
    assert layer.in_graph == 0  # a new graph holds nothing until the first search: its rows are the tail
    queries = vectors[300:] + 0.05 * rng.normal(size=(100, 32)).astype(np.float32)
    assert _pairs(graph, queries[:10], 3, 0.3) == _pairs(exact, queries[:10], 3, 0.3)
    for mirror in (graph, exact):  # the next batch's blocks: near the queries, only in the tail
        mirror._layers["curated"].append(np.arange(301, 401, dtype=np.int64), vectors[300:], mirror._row)
        mirror.version += 1
    assert layer.in_graph == 300 and layer.graph.ntotal <= 300
    got = _pairs(graph, queries, 3, 0.3)
    assert got == _pairs(exact, queries, 3, 0.3)
    assert {block for _, block in got} & set(range(301, 401))  # the tail's rows are found
    graph.settle()
    assert layer.in_graph == layer.graph.ntotal == 400
    assert threads and all(name.startswith("mirror-graph") for name in threads)


def test_a_graph_search_split_across_two_threads_answers_as_one() -> None:
    rng = np.random.default_rng(5)
    vectors = rng.normal(size=(2000, 32)).astype(np.float32)
    mirror = _mirror(vectors, exact_below=0)
    mirror.nearest(list(vectors[:1]), ["curated"], 1, 0.0)  # the first search hands every row to the graph
    mirror.settle()
    layer = mirror._layers["curated"]
    queries = np.ascontiguousarray(vectors[:300] + 0.5 * rng.normal(size=(300, 32)).astype(np.float32))
    whole = layer.graph.search(queries, 16)
    threads: list[str] = []
    real_search = layer.graph.search
    layer.graph.search = lambda q, k: (threads.append(threading.current_thread().name), real_search(q, k))[1]
    split = layer._search(queries, 16, mirror._adder())
    assert np.array_equal(split[0], whole[0]) and np.array_equal(split[1], whole[1])
    assert sorted(name.split("_")[0] for name in threads) == ["MainThread", "mirror-graph"]
