"""Dedup inside a batch: every item of a batch meets the vault as it would after the items before it were written.

The batch's candidates come from one set-based query against the vault as it was before the batch
(``dedup_candidates_v3``). What earlier items of the same batch did is kept here, in memory: the blocks they
created, the blocks they merged into (new text, vector, fingerprint and hash) and the blocks they superseded
(no longer current). Each item's candidates are the vault's rows with those blocks taken out, plus those blocks
as they now are, ranked and cut exactly as the query ranks and cuts them. So two near-identical items in one batch
meet the same SKIP / MERGE / SUPERSEDE / CREATE rules as across batches, and a batch leaves the vault as writing its
items one at a time would (tests/integration/test_write_batch.py compares the two).

The query returns a few more nearest rows than Dedup keeps (``k + spare``): when earlier items changed more of an
item's nearest blocks than the spare covers, :meth:`BatchDedup.candidates` answers ``None`` and the caller asks
the vault again for that item alone with a larger k.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from app.write.dedup import Candidate, DedupConfig

# Dedup compares within a layer: raw chunks with chunks, session summaries with summaries, curated memories and
# units together. The names are dedup_candidates_v3's p_layers and the vector mirror's (app/write/mirror.py).
LAYERS: dict[str, frozenset[str]] = {"chunk": frozenset({"chunk"}), "summary": frozenset({"summary"}),
                                     "curated": frozenset({"memory", "unit"})}


_LAYER_CODES = tuple(LAYERS)  # a layer's number in BatchDedup's arrays


def layer_of(kind: str) -> str:
    """The Dedup layer of an item of ``kind``."""
    return kind if kind in ("chunk", "summary") else "curated"


@dataclass(frozen=True, slots=True)
class CandidateRow:
    """One row of ``dedup_candidates_v3``: a block near an item (``nearest``) or with its exact hash."""

    block_id: int
    cosine: float
    kind: str
    category: str | None
    content: str
    fingerprint: int
    same_hash: bool
    nearest: bool

    def candidate(self) -> Candidate:
        return Candidate(self.block_id, self.cosine, self.kind, self.category, self.content, self.fingerprint,
                         self.same_hash)


@dataclass(slots=True)
class BatchBlock:
    """A block as this batch left it: created by an earlier item, merged into, or superseded (not current)."""

    block_id: int
    kind: str
    category: str | None
    content: str
    embedding: np.ndarray | None
    fingerprint: int
    digest: bytes
    current: bool = True


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """Cosine as the database computes it for a candidate (``(1 - (a <=> b))::real``)."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    den = float(np.sqrt(np.dot(a64, a64) * np.dot(b64, b64)))
    return float(np.float32(np.dot(a64, b64) / den)) if den > 0 else float("nan")


class BatchDedup:
    def __init__(self, config: DedupConfig, spare: int) -> None:
        self.config = config
        self.spare = spare
        self.changed: dict[int, BatchBlock] = {}
        # The changed blocks' vectors as matrix rows (float64, as ``cosine`` computes), so an item meets all of
        # them in one product: compared one by one in Python, 256 items x 256 blocks cost 1.2 ms an item.
        self._row: dict[int, int] = {}
        self._blocks: list[BatchBlock] = []
        self._mat = np.zeros((0, 0), dtype=np.float64)
        self._sq = np.zeros(0, dtype=np.float64)
        # Per row, what picks the rows an item meets (current, with a vector, of its layer) and its hash, as
        # arrays: chosen in Python, block by block, 500 items x 250 blocks were ~60 ms a pass of a batch.
        self._usable = np.zeros(0, dtype=bool)  # current and with a vector
        self._layer = np.zeros(0, dtype=np.int8)  # index in _LAYER_CODES
        self._digest = np.zeros(0, dtype=object)
        self._ids = np.zeros(0, dtype=np.int64)  # block ids (ties among equal cosines go to the lower one)

    @property
    def fetch_k(self) -> int:
        """How many nearest rows to ask the vault for, per item."""
        return self.config.candidates + self.spare

    def candidates(self, kind: str, embedding: np.ndarray, digest: bytes, rows: list[CandidateRow],
                   fetched_k: int) -> list[Candidate] | None:
        """The item's candidates as ``dedup_candidates`` would return them after the batch's earlier items,
        or None when ``rows`` (asked with ``fetched_k``) no longer hold its k nearest current blocks."""
        cfg = self.config
        nearest = [r for r in rows if r.nearest]
        near = [r.candidate() for r in nearest if r.block_id not in self.changed]
        if len(nearest) >= fetched_k and len(near) < cfg.candidates:
            return None  # earlier items changed blocks this item would have seen: ask the vault again
        hashed = [r.candidate() for r in rows if r.same_hash and not r.nearest and r.block_id not in self.changed]
        n_rows = len(self._blocks)
        idx = np.flatnonzero(self._usable[:n_rows] & (self._layer[:n_rows] == _LAYER_CODES.index(layer_of(kind))))
        if len(idx):
            a64 = embedding.astype(np.float64)
            den = np.sqrt(np.dot(a64, a64) * self._sq[idx])
            with np.errstate(divide="ignore", invalid="ignore"):
                cos = np.where(den > 0, (self._mat[:n_rows] @ a64)[idx] / den, np.nan).astype(np.float32)
            same = self._digest[idx] == digest
            # In row order, as the rows are met; the threshold compared in float64, as a Python float compares.
            above = cos.astype(np.float64) >= cfg.min_cosine
            pick = np.flatnonzero(above | same)
            if int(above.sum()) > cfg.candidates:
                # Of the rows above the floor (0.20: most of a batch's blocks), only the k best can be kept, and
                # those of the same hash whatever their rank: no Candidate is made for the others (making them all
                # was a tenth of the bulk path's critical thread). Ranked as ``near`` is sorted below.
                up = np.flatnonzero(above)
                best = up[np.lexsort((self._ids[idx[up]], -cos[up]))[: cfg.candidates]]
                keep = same.astype(bool)  # union1d(best, flatnonzero(same)) without its sort: a mask, in order
                keep[best] = True
                pick = np.flatnonzero(keep)
            for n, value, is_same in zip(idx[pick].tolist(), cos[pick].tolist(), same[pick].tolist(), strict=True):
                b = self._blocks[n]
                c = Candidate(b.block_id, value, b.kind, b.category, b.content, b.fingerprint, bool(is_same))
                (near if value >= cfg.min_cosine else hashed).append(c)
        near.sort(key=lambda c: (-c.cosine, c.block_id))
        kept = near[: cfg.candidates]
        ids = {c.block_id for c in kept}
        out = kept + [c for c in near[cfg.candidates:] if c.same_hash and c.block_id not in ids]
        out += [c for c in hashed if c.block_id not in ids]
        out.sort(key=lambda c: (-c.cosine, c.block_id))
        return out

    # --- what the batch's items did -------------------------------------------------------------------------

    def created(self, block: BatchBlock) -> None:
        self._put(block)

    def superseded(self, block_id: int) -> None:
        block = self.changed.get(block_id)
        if block is None:
            self._put(BatchBlock(block_id, "", None, "", None, 0, b"", current=False))
        else:
            block.current = False
            self._usable[self._row[block_id]] = False

    def merged(self, target: Candidate, content: str, embedding: np.ndarray, fingerprint: int, digest: bytes) -> None:
        block = self.changed.get(target.block_id)
        if block is None:
            self._put(BatchBlock(target.block_id, target.kind, target.category, content, embedding, fingerprint,
                                 digest))
        else:
            block.content, block.embedding, block.fingerprint, block.digest = content, embedding, fingerprint, digest
            self._put(block)

    def _put(self, block: BatchBlock) -> None:
        """Record ``block`` (new, or changed in place) and its vector's row."""
        self.changed[block.block_id] = block
        row = self._row.get(block.block_id)
        if row is None:
            row = self._row[block.block_id] = len(self._blocks)
            self._blocks.append(block)
            if row >= len(self._usable):
                cap = max(2 * len(self._usable), 64)
                self._usable, self._layer, self._digest, self._ids = (
                    _grown(self._usable, cap), _grown(self._layer, cap), _grown(self._digest, cap),
                    _grown(self._ids, cap))
            self._ids[row] = block.block_id
        self._usable[row] = block.current and block.embedding is not None
        self._layer[row] = next((n for n, kinds in enumerate(LAYERS.values()) if block.kind in kinds), -1)
        self._digest[row] = block.digest
        if block.embedding is None:
            return
        v = block.embedding.astype(np.float64)
        if self._mat.shape[1] != len(v) or row >= len(self._mat):
            cap = max(2 * len(self._mat), row + 1, 64)
            mat = np.zeros((cap, len(v)), dtype=np.float64)
            mat[: len(self._mat)] = self._mat if self._mat.shape[1] == len(v) else 0.0
            sq = np.zeros(cap, dtype=np.float64)
            sq[: len(self._sq)] = self._sq
            self._mat, self._sq = mat, sq
        self._mat[row] = v
        self._sq[row] = np.dot(v, v)


def _grown(a: np.ndarray, cap: int) -> np.ndarray:
    out = np.zeros(cap, dtype=a.dtype)
    out[: len(a)] = a
    return out
