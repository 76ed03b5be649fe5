"""``BatchDedup.candidates`` (app/write/batch.py) makes a Candidate only for the batch's blocks that can be kept (the
k best above the floor, and those of the same hash): its answer equals the one every block above the floor as a
Candidate gives, ties at equal cosines included, whatever mix of database rows and batch blocks an item meets."""

from __future__ import annotations

import numpy as np
import pytest

from app.write.batch import BatchBlock, BatchDedup, CandidateRow
from app.write.dedup import Candidate, DedupConfig


def _reference(batch: BatchDedup, kind: str, embedding: np.ndarray, digest: bytes,
               rows: list[CandidateRow]) -> list[Candidate]:
    """Every usable block of the item's layer at or above the floor (or of its hash) as a Candidate, ranked and
    cut as the database's query ranks and cuts them."""
    from app.write.batch import cosine

    cfg = batch.config
    near = [r.candidate() for r in rows if r.nearest and r.block_id not in batch.changed]
    hashed = [r.candidate() for r in rows if r.same_hash and not r.nearest and r.block_id not in batch.changed]
    for b in batch._blocks:
        if not b.current or b.embedding is None or b.kind not in ("memory", "unit"):
            continue
        value = cosine(embedding, b.embedding)
        c = Candidate(b.block_id, value, b.kind, b.category, b.content, b.fingerprint, b.digest == digest)
        if value >= cfg.min_cosine:
            near.append(c)
        elif c.same_hash:
            hashed.append(c)
    near.sort(key=lambda c: (-c.cosine, c.block_id))
    kept = near[: cfg.candidates]
    ids = {c.block_id for c in kept}
    out = kept + [c for c in near[cfg.candidates:] if c.same_hash and c.block_id not in ids]
    out += [c for c in hashed if c.block_id not in ids]
    out.sort(key=lambda c: (-c.cosine, c.block_id))
    return out


@pytest.mark.parametrize("seed", range(6))
def test_batch_candidates_equal_every_block_made_a_candidate(seed: int) -> None:
    rng = np.random.default_rng(seed)
    dim = 16
    base = rng.normal(size=dim).astype(np.float32)
    batch = BatchDedup(DedupConfig(), spare=2)
    vectors = []
    for n in range(60):
        v = (base + rng.normal(scale=0.8, size=dim)).astype(np.float32)
        if n % 7 == 3 and vectors:  # exact copies: equal cosines, ranked by block id
            v = vectors[-1].copy()
        vectors.append(v)
        digest = b"same" if n % 11 == 5 else bytes([n])
        batch.created(BatchBlock(1000 - n, "memory", None, f"text {n}", v, n, digest))
    for gone in (1000 - 4, 1000 - 9):
        batch.superseded(gone)
    rows = [CandidateRow(5, 0.97, "memory", None, "vault row", 1, False, True),
            CandidateRow(6, 0.21, "memory", None, "vault row 2", 2, False, True),
            CandidateRow(7, 0.05, "memory", None, "same text", 3, True, False)]
    for q in range(8):
        item = (base + rng.normal(scale=0.8, size=dim)).astype(np.float32) if q else vectors[10]
        digest = b"same" if q % 2 else b"other"
        got = batch.candidates("memory", item, digest, rows, fetched_k=5)
        assert got == _reference(batch, "memory", item, digest, rows)
    assert sum(1 for b in batch._blocks if b.current) > 3 * DedupConfig().candidates  # the cut was exercised
