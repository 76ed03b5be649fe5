"""Reference retrievers beside the read track's own rails, over exactly the blocks the vault holds.

``--pipeline rails`` (``bench locomo``, ``bench longmemeval``) asks every question through each of these, on the
same vault, as of the same instant, and reports them side by side (``format_rails``):

- ``sparse`` / ``sparse-bm25``: the product's sparse rail alone (``memvault.fast_search_v1`` with the dense rail
  off, on the question's focus as the read track sends it), with its idf-sum scan (``_sparse_rail_v1``) and with
  BM25 scoring (``_sparse_rail_v2``, ``SearchConfig.sparse_bm25``);
- ``bm25``: BM25 from ``bm25s`` (k1 1.5, b 0.75, Lucene idf) over the blocks' content, tokenized with English stop
  words and the Snowball English stemmer (PyStemmer), on the question as asked; ``bm25-focus`` on the question's
  focus, the query the product's sparse rail gets;
- ``dense``: the product's dense rail alone (the block's stored vector: the chunk embedded with the end of the
  previous turn as context), exact in a vault of this size;
- ``<encoder>``: exact cosine of each reference encoder (``use``, ``e5``, ``e5-onnx``, ``minilm-onnx``: whichever is installed
  and asked for) over the blocks' content alone, with the encoder's own query and passage encodings;
- ``dense-focus``: the dense rail queried with the question's focus (its subject's words, app/read/focus.py), and
  ``pool+focus`` the fused pool with what that second dense query adds (a candidate-pool mechanism, issue 34);
- ``fusion`` / ``fusion-bm25``: the product's two rails fused as the read track fuses them (RRF, its weights),
  each rail reading ``RAIL_N``, the sparse one scored either way; its list is the whole candidate pool (up to
  2 x ``RAIL_N``), so its recall at the list's end is the share of the evidence any stage after fast search could
  still rank;
- ``full`` / ``full-bm25``: the read track's ``recall``, with either sparse scoring (``SearchConfig.sparse_bm25``;
  the two are the candidate settings the handlers cross-validate, ``bm25_cv``).

Each retriever returns at most ``RAIL_N`` ids (fusion: its whole pool), so recall@100 of a rail is the evidence in
its top 100, the candidate pool; a rail that holds the evidence at 100 but not at 10 has a ranking loss, one that
does not hold it at 100 a pool loss. The reference indexes are built once per (vault, as_of) and kept for the run.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import numpy as np

from app.services import Services
from app.vaults import Vault

RAIL_N = 100  # each rail's candidates, as the read track reads at most (SearchConfig.dense_n / sparse_n)
ENCODERS = ("use", "e5", "e5-onnx", "minilm-onnx")
BM25_K1, BM25_B = 1.5, 0.75  # bm25s' defaults (Lucene's variant)

# The blocks a rail may return at as_of: valid then, not retracted, not quarantined by NoiseFilter (the
# product's rails filter the same way), in id order. Benchmark instrument, bound parameters only.
_BLOCKS_SQL = """
SELECT b.id, b.content FROM memvault.block b
WHERE b.vault_id = %(vault)s AND b.retracted_at IS NULL
  AND b.valid_at <= coalesce(%(as_of)s::timestamptz, now())
  AND (b.invalid_at IS NULL OR b.invalid_at > coalesce(%(as_of)s::timestamptz, now()))
  AND NOT (b.quarantine_tags && memvault.default_noise_tags_v1())
ORDER BY b.id
"""

_RAIL_SQL = """
SELECT id FROM memvault.fast_search_v1(%(qvec)s, %(query)s, %(as_of)s, NULL, %(cfg)s::jsonb)
"""


def available_encoders(asked: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """The asked encoders that are installed, and why each other one is skipped."""
    from app.bench.embed import _unavailable
    from app.settings import get_settings

    settings = get_settings()
    ok, skipped = [], {}
    for kind in asked:
        if kind not in ENCODERS:
            raise ValueError(f"unknown reference encoder {kind!r}; one of {', '.join(ENCODERS)}")
        why, _ = _unavailable(kind, settings)
        if why:
            skipped[kind] = why
        else:
            ok.append(kind)
    return ok, skipped


@dataclass(slots=True)
class _Corpus:
    ids: np.ndarray
    texts: list[str]


class _Blocks:
    """The vault's blocks at as_of, read once per (vault, as_of) and shared by the reference retrievers."""

    def __init__(self, services: Services) -> None:
        self.services = services
        self._cache: dict[tuple[Any, datetime | None], _Corpus] = {}

    async def get(self, vault: Vault, as_of: datetime | None) -> _Corpus:
        key = (vault.id, as_of)
        if key not in self._cache:
            if len(self._cache) > 8:  # LongMemEval: one vault per question, never asked again
                self._cache.pop(next(iter(self._cache)))
            rows = await self.services.db.fetchall(_BLOCKS_SQL, {"vault": vault.id, "as_of": as_of},
                                                   vault_id=vault.id)
            self._cache[key] = _Corpus(np.array([int(r["id"]) for r in rows], dtype=np.int64),
                                       [r["content"] for r in rows])
        return self._cache[key]


class BM25Reference:
    """BM25 (bm25s, Snowball English stemmer, English stop words) over the vault's blocks as of the question."""

    name = "bm25"

    def __init__(self, blocks: _Blocks, *, focused: bool = False) -> None:
        import bm25s
        import Stemmer

        self.blocks = blocks
        self.focused = focused  # the question's focus (app/read/focus.py), as the product's sparse rail reads it
        self._bm25s = bm25s
        self.stemmer = Stemmer.Stemmer("english")
        self._index: dict[tuple[Any, datetime | None], Any] = {}

    def _tokens(self, texts: list[str]) -> Any:
        return self._bm25s.tokenize(texts, stopwords="en", stemmer=self.stemmer, show_progress=False)

    async def __call__(self, vault: Vault, query: str, *, as_of: datetime | None, n: int) -> list[int]:
        corpus = await self.blocks.get(vault, as_of)
        if not corpus.texts:
            return []
        key = (vault.id, as_of)
        if key not in self._index:
            if len(self._index) > 8:
                self._index.pop(next(iter(self._index)))
            model = self._bm25s.BM25(k1=BM25_K1, b=BM25_B)
            model.index(self._tokens(corpus.texts), show_progress=False)
            self._index[key] = model
        model = self._index[key]
        if self.focused:
            from app.read.focus import focus

            query = focus(query) or query
        q = self._tokens([query])
        if not q.vocab:
            return []
        k = min(n, RAIL_N, len(corpus.texts))
        docs, scores = model.retrieve(q, k=k, show_progress=False, n_threads=1)
        return [int(corpus.ids[d]) for d, s in zip(docs[0], scores[0], strict=True) if s > 0]


class DenseReference:
    """Exact cosine of one encoder over the blocks' content (each text embedded once per run)."""

    def __init__(self, blocks: _Blocks, kind: str) -> None:
        from app.models.registry import build_embedder
        from app.settings import get_settings

        self.blocks = blocks
        self.name = kind
        self.embedder = build_embedder(get_settings().model_copy(update={"embedder": kind}))
        self._vectors: dict[str, np.ndarray] = {}  # text -> unit vector

    async def _matrix(self, texts: list[str]) -> np.ndarray:
        todo = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        for i in range(0, len(todo), 256):
            part = todo[i:i + 256]
            vecs = await asyncio.to_thread(self.embedder.embed_documents, part)
            for t, v in zip(part, np.asarray(vecs, dtype=np.float32), strict=True):
                self._vectors[t] = v / max(float(np.linalg.norm(v)), 1e-12)
        return np.stack([self._vectors[t] for t in texts]) if texts else np.zeros((0, 1), np.float32)

    async def __call__(self, vault: Vault, query: str, *, as_of: datetime | None, n: int) -> list[int]:
        corpus = await self.blocks.get(vault, as_of)
        if not corpus.texts:
            return []
        m = await self._matrix(corpus.texts)
        q = np.asarray(await asyncio.to_thread(self.embedder.embed_query, query), dtype=np.float32)
        sims = m @ (q / max(float(np.linalg.norm(q)), 1e-12))
        k = min(n, RAIL_N, len(sims))
        top = np.argpartition(-sims, k - 1)[:k]
        top = top[np.lexsort((corpus.ids[top], -sims[top]))]
        return [int(corpus.ids[i]) for i in top]


class ProductRail:
    """The read track's fast search (``memvault.fast_search_v1``) with one rail, or both fused, as the read
    track configures it (``ReadConfig.search``, the question's focus on the sparse rail), each rail reading
    ``RAIL_N``. ``bm25``: the sparse rail with BM25 scoring (``_sparse_rail_v2``), whatever the default is."""

    def __init__(self, services: Services, rails: str, *, bm25: bool | None = None, focused: bool = False,
                 search: Any = None) -> None:
        from app.read.config import ReadConfig

        self.services = services
        self.rails = rails  # "dense", "sparse" or "both"
        self.focused = focused  # the dense rail on the question's focus (its subject's words) instead of the question
        search = search or ReadConfig().search  # a SearchConfig other than the default's
        if bm25 is not None:
            search = replace(search, sparse_bm25=bm25)
        cfg = {**search.params(None), "dense_n": RAIL_N, "sparse_n": RAIL_N}
        if rails == "dense":
            cfg["sparse_n"] = 0
        elif rails == "sparse":
            cfg["dense_n"] = 0
        self.cfg = json.dumps(cfg)

    async def __call__(self, vault: Vault, query: str, *, as_of: datetime | None, n: int) -> list[int]:
        from app.read.focus import focus

        qvec = None
        if self.rails != "sparse":
            text = (focus(query) or query) if self.focused else query
            qvec = await asyncio.to_thread(self.services.embedder.embed_query, text)
        params = {"qvec": qvec, "query": focus(query) or query, "as_of": as_of, "cfg": self.cfg}
        rows = await self.services.db.fetchall(_RAIL_SQL, params, vault_id=vault.id)
        return [int(r["id"]) for r in rows]


class PoolUnion:
    """A candidate pool widened by a second query: the first retriever's list, then what the second adds."""

    def __init__(self, first: Any, second: Any) -> None:
        self.first, self.second = first, second

    async def __call__(self, vault: Vault, query: str, *, as_of: datetime | None, n: int) -> list[int]:
        a = await self.first(vault, query, as_of=as_of, n=n)
        b = await self.second(vault, query, as_of=as_of, n=n)
        return list(dict.fromkeys([*a, *b]))


def rail_retrievers(services: Services, encoders: Sequence[str], *, writeback: bool = True) -> dict[str, Any]:
    """The ``rails`` pipeline's retrievers in report order: sparse rails and BM25, the dense rail and the
    reference encoders, the fusion, the full track."""
    from app.bench.full import FullRecall

    from app.read.config import ReadConfig

    blocks = _Blocks(services)
    bm25 = BM25Reference(blocks)
    out: dict[str, Any] = {
        "sparse": ProductRail(services, "sparse", bm25=False),
        "sparse-bm25": ProductRail(services, "sparse", bm25=True),
        "bm25": bm25,
        "bm25-focus": BM25Reference(blocks, focused=True),
        "dense": ProductRail(services, "dense"),
    }
    for kind in encoders:
        out[kind] = DenseReference(blocks, kind)
    out["dense-focus"] = ProductRail(services, "dense", focused=True)
    out["fusion"] = ProductRail(services, "both", bm25=False)
    out["fusion-bm25"] = ProductRail(services, "both", bm25=True)
    out["pool+focus"] = PoolUnion(out["fusion"], out["dense-focus"])
    base = ReadConfig()
    # Pseudo-relevance feedback on the sparse rail (its second pass fused as a rail of its own, weight 1): what
    # it adds to the sparse rail's list and to the fused pool.
    prf = replace(base.search, sparse_prf_w=1.0)
    out["sparse+prf"] = ProductRail(services, "sparse", bm25=False, search=prf)
    out["fusion+prf"] = ProductRail(services, "both", bm25=False, search=prf)
    for name, flag in (("full", False), ("full-bm25", True)):
        cfg = replace(base, search=replace(base.search, sparse_bm25=flag))
        out[name] = FullRecall(services, config=cfg, writeback=writeback)
    return out


def format_rails(results: dict[str, dict[str, Any]], metrics: Sequence[str], category_of: str,
                 names: dict[str, str] | None = None) -> str:
    """Side by side: each retriever's ``metrics`` overall, then per category (``by_<category_of>``)."""
    lines = [f"{'retriever':<14}{'n':>5}" + "".join(f"{m:>15}" for m in metrics)]
    for name, r in results.items():
        cells = "".join(f"{r[m]:>15.3f}" if m in r else f"{'-':>15}" for m in metrics)
        lines.append(f"{name:<14}{r['questions']:>5}{cells}")
    cats = list(next(iter(results.values()))[f"by_{category_of}"])
    for c in cats:
        label = (names or {}).get(c, c)
        lines.append(f"-- {category_of} {label}")
        for name, r in results.items():
            row = r[f"by_{category_of}"].get(c)
            if row is None:
                continue
            cells = "".join(f"{row[m]:>15.3f}" if m in row else f"{'-':>15}" for m in metrics)
            lines.append(f"  {name:<12}{row['questions']:>5}{cells}")
    return "\n".join(lines)


def bm25_cv(results: dict[str, dict[str, Any]], folds: Sequence[Any], key: Any, objective: Any) -> dict[str, Any]:
    """Whether the full track should score its sparse rail by BM25: ``full`` (today's) against ``full-bm25``,
    chosen on the other folds and scored on the held-out one (app/bench/folds.py), ties to today's."""
    from app.bench.folds import cross_validate

    by_setting = {"search.sparse_bm25=false": results["full"]["details"],
                  "search.sparse_bm25=true": results["full-bm25"]["details"]}
    return cross_validate(by_setting, folds, key, objective)
