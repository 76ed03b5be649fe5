"""PageRank on an undirected weighted graph, sparse (edge arrays, no n x n matrix): cascade recall's Personalized
PageRank from the query's entities (``app.read.cascade``) and the background's graph centrality over a whole
vault (``app.background.centrality``) are the same computation with other seeds."""

from __future__ import annotations

import numpy as np


def pagerank(edges: list[tuple[int, int, float]], seeds: dict[int, float] | None = None, *, damping: float = 0.85,
             iterations: int = 50, tol: float = 1e-8) -> dict[int, float]:
    """r = (1 - d) p + d W^T r, W the row-normalized weights of the undirected edges, p the normalized seed
    weights (uniform when there are none, which is plain PageRank). Dangling mass returns to the seeds. Returns
    a score per node, summing to 1. Self-loops are ignored."""
    seeds = seeds or {}
    nodes = sorted({a for a, _, _ in edges} | {b for _, b, _ in edges} | set(seeds))
    if not nodes:
        return {}
    index = {node: i for i, node in enumerate(nodes)}
    n = len(nodes)
    kept = [(index[a], index[b], w) for a, b, w in edges if a != b]
    src = np.array([a for a, _, _ in kept] + [b for _, b, _ in kept], dtype=np.int64)
    dst = np.array([b for _, b, _ in kept] + [a for a, _, _ in kept], dtype=np.int64)
    weight = np.array([w for _, _, w in kept] * 2, dtype=np.float64)
    out = np.bincount(src, weights=weight, minlength=n)
    share = np.divide(weight, out[src], out=np.zeros_like(weight), where=out[src] > 0)
    p = np.zeros(n)
    for node, s in seeds.items():
        p[index[node]] = max(s, 0.0)
    if p.sum() <= 0:
        p[:] = 1.0
    p /= p.sum()
    dangling = out == 0
    r = p.copy()
    for _ in range(iterations):
        spread = np.bincount(dst, weights=share * r[src], minlength=n)
        nxt = (1 - damping) * p + damping * (spread + r[dangling].sum() * p)
        if np.abs(nxt - r).sum() < tol:
            r = nxt
            break
        r = nxt
    return {node: float(r[index[node]]) for node in nodes}
