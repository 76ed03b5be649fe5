"""dedup_candidates_v3's exact scan screens the vault's pairs by inner product and ranks the pairs it keeps by
cosine (sql/idempotent/040-write.sql): it must return the rows the plain cosine scan returns (every item's p_k
nearest blocks of its layer at or above p_min_cosine, ranked by cosine then id, and its exact-hash hits), for
vectors of any length, pairs at the threshold within float rounding, ties and a zero vector included."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

import numpy as np
import psycopg
import pytest
from pgvector.psycopg import register_vector

DIM = 512

# The scan as it was before the inner-product screen (b54e9c8): every pair of the vault gets its cosine.
COSINE_FORM = """
WITH i AS (
    SELECT x.emb, x.h, x.ord::integer AS ord,
           CASE WHEN x.layer IN ('chunk', 'summary') THEN ARRAY[x.layer] ELSE ARRAY['memory', 'unit'] END AS kinds
      FROM unnest(%(embs)s::vector[], %(hashes)s::bytea[], %(layers)s::text[]) WITH ORDINALITY AS x(emb, h, layer, ord)
), near AS (
    SELECT r.ord, r.id FROM (
        SELECT d.ord, d.id, row_number() OVER (PARTITION BY d.ord ORDER BY d.cosine DESC, d.id) AS rn
          FROM (SELECT i.ord, b.id, (1 - (b.embedding <=> i.emb))::real AS cosine
                  FROM i JOIN memvault.block b
                    ON b.vault_id = %(vault)s AND b.retracted_at IS NULL AND b.invalid_at IS NULL
                   AND b.kind = ANY (i.kinds)
                OFFSET 0) d
         WHERE d.cosine >= %(min)s::real) r
     WHERE r.rn <= %(k)s
), hits AS (
    SELECT u.ord, u.id, bool_or(u.nearest) AS nearest FROM (
        SELECT n.ord, n.id, true AS nearest FROM near n
        UNION ALL
        SELECT i.ord, b.id, false
          FROM i JOIN memvault.block b
            ON b.vault_id = %(vault)s AND b.content_hash = i.h AND b.retracted_at IS NULL AND b.invalid_at IS NULL
           AND b.kind = ANY (i.kinds)
    ) u GROUP BY u.ord, u.id
)
SELECT i.ord AS item, b.id AS block_id, (1 - (b.embedding <=> i.emb))::real AS cosine, h.nearest
  FROM hits h JOIN i ON i.ord = h.ord JOIN memvault.block b ON b.vault_id = %(vault)s AND b.id = h.id
 ORDER BY 1, 3 DESC, 2
"""

SCAN = """
SELECT item, block_id, cosine, nearest
  FROM memvault.dedup_candidates_v3(%(vault)s, %(embs)s, %(hashes)s, %(layers)s, %(k)s, %(min)s::real, 5000)
"""

INSERT = """
INSERT INTO memvault.block (vault_id, kind, category, content, normalized, tsv, fingerprint, content_hash,
    source_kind, trust_score, confidence, valid_at, embedding, invalid_at)
VALUES (%(vault)s, %(kind)s, 'Fact', %(content)s, %(content)s, ''::tsvector, 0, %(hash)s, 'user', 0.8, 0.8,
    %(at)s, %(embedding)s, %(invalid)s)
"""


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


def _at_cosine(q: np.ndarray, cosine: float, rng: np.random.Generator) -> np.ndarray:
    """A unit vector whose cosine with the unit vector ``q`` is ``cosine`` (up to float32 rounding)."""
    u = rng.standard_normal(DIM)
    u = _unit(u - (u @ q) * q)
    return cosine * q + np.sqrt(1 - cosine * cosine) * u


def _vault_and_items(rng: np.random.Generator) -> tuple[list[dict], list[np.ndarray], list[str]]:
    """Blocks of every layer around a few item vectors: at lengths 0.2-5 (the screen must not assume unit
    vectors), at the threshold and a hair either side of it, exact copies (cosine ties, broken by id), a zero
    vector (a NaN cosine), closed and retracted-like rows (left out), and random far ones."""
    items = [_unit(rng.standard_normal(DIM)) for _ in range(6)]
    layers = ["unit", "memory", "unit", "chunk", "summary", "unit"]
    kinds = {"unit": ["unit", "memory"], "memory": ["unit", "memory"], "chunk": ["chunk"], "summary": ["summary"]}
    blocks: list[dict] = []

    def add(vec: np.ndarray, kind: str, *, invalid: bool = False) -> None:
        n = len(blocks)
        blocks.append({"kind": kind, "content": f"block {n}", "hash": hashlib.sha256(f"block {n}".encode()).digest(),
                       "embedding": np.asarray(vec, dtype=np.float32), "invalid": invalid})

    for q, layer in zip(items, layers, strict=True):
        for c in (0.99, 0.93, 0.85, 0.7501, 0.75, 0.75, 0.7499999, 0.75000001, 0.749, 0.5, 0.2, 0.19999):
            for kind in kinds[layer]:
                add(_at_cosine(q, c, rng) * rng.uniform(0.2, 5.0), kind)
        same = _at_cosine(q, 0.9, rng)
        add(same, kinds[layer][0])
        add(same * 3.0, kinds[layer][-1])  # the same direction longer: the same cosine, a tie broken by id
        add(_at_cosine(q, 0.95, rng), kinds[layer][0], invalid=True)  # closed: never a candidate
    for kind in ("unit", "memory", "chunk", "summary"):
        for _ in range(40):
            add(rng.standard_normal(DIM) * rng.uniform(0.2, 5.0), kind)
    add(np.zeros(DIM), "unit")  # a zero vector: cosine NaN, which PostgreSQL ranks above every number
    return blocks, items + [np.zeros(DIM, dtype=np.float32)], layers + ["memory"]


@pytest.mark.parametrize(("min_cosine", "k"), [(0.75, 3), (0.75, 20), (0.2, 5), (0.0, 40), (0.99, 2)])
async def test_the_inner_product_screen_returns_the_cosine_scans_rows(vault, db_url, min_cosine: float,
                                                                      k: int) -> None:
    rng = np.random.default_rng(33)
    blocks, items, layers = _vault_and_items(rng)
    at = datetime(2026, 1, 1, tzinfo=UTC)
    with psycopg.connect(db_url) as conn:
        register_vector(conn)
        with conn.cursor() as cur:
            cur.executemany(INSERT, [{**b, "vault": vault.id, "at": at, "invalid": at if b["invalid"] else None}
                                     for b in blocks])
        hashes = [hashlib.sha256(f"item {n}".encode()).digest() for n in range(len(items))]
        hashes[1] = blocks[5]["hash"]  # an exact-hash hit of another layer's block: no hit
        hashes[2] = blocks[30]["hash"]  # and one of its own layer
        params = {"vault": vault.id, "embs": [np.asarray(v, dtype=np.float32) for v in items],
                  "hashes": hashes, "layers": layers, "k": k, "min": min_cosine}
        conn.execute("SELECT set_config('memvault.vault_id', %s, true)", (str(vault.id),))
        want = conn.execute(COSINE_FORM, params).fetchall()
        got = conn.execute(SCAN, params).fetchall()
    assert len(want) > len(items)
    assert [(r[0], r[1], r[3]) for r in got] == [(r[0], r[1], r[3]) for r in want]
    for g, w in zip(got, want, strict=True):  # the same cosine expression: equal, NaN for the zero vector
        assert (np.isnan(g[2]) and np.isnan(w[2])) or abs(g[2] - w[2]) <= 1e-6
    if k >= 20 and min_cosine <= 0.75:  # the pairs at the threshold, a hair either side, are decided alike
        assert any(abs(r[2] - 0.75) < 1e-6 for r in want)


async def test_each_candidate_is_read_once_whatever_the_statistics(services, vault, db_url) -> None:
    """With block's statistics describing another vault only (as in the benchmark's database after its previous
    run, dropped: the vault being written is estimated at one row), the candidates' rows are read by their
    address, not by a join the planner turned into a nested loop over the whole vault once per candidate (through
    block_session_idx, or materialized and re-read): the call fetches the vault's rows three times (the size
    check, the scan, the exact-hash hits) and each candidate's once at most, and its rows are the cosine scan's."""
    from app.vaults import create_vault

    other = await create_vault(services.db, "statistics-vault")
    rng = np.random.default_rng(7)
    blocks, items, layers = _vault_and_items(rng)
    at = datetime(2026, 1, 1, tzinfo=UTC)
    with psycopg.connect(db_url) as conn:
        register_vector(conn)
        rows = [{**b, "at": at, "invalid": at if b["invalid"] else None} for b in blocks]
        with conn.cursor() as cur:
            cur.executemany(INSERT, [{**r, "vault": other.id} for r in rows])
        conn.commit()
        conn.execute("ANALYZE memvault.block")
        conn.commit()
        with conn.cursor() as cur:
            cur.executemany(INSERT, [{**r, "vault": vault.id} for r in rows])
        conn.commit()
        params = {"vault": vault.id, "embs": [np.asarray(v, dtype=np.float32) for v in items],
                  "hashes": [hashlib.sha256(f"item {n}".encode()).digest() for n in range(len(items))],
                  "layers": layers, "k": 5, "min": 0.2}
        params["hashes"][2] = blocks[30]["hash"]
        conn.execute("SELECT set_config('memvault.vault_id', %s, true)", (str(vault.id),))
        fetched = ("SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) FROM pg_stat_xact_user_tables "
                   "WHERE schemaname = 'memvault' AND relname = 'block'")
        before = conn.execute(fetched).fetchone()[0]
        got = conn.execute(SCAN, params).fetchall()
        read = conn.execute(fetched).fetchone()[0] - before
        want = conn.execute(COSINE_FORM, params).fetchall()
    assert len(got) > 2 * len(items)  # enough candidates that a per-candidate read of the vault would show
    assert [(r[0], r[1], r[3]) for r in got] == [(r[0], r[1], r[3]) for r in want]
    assert read <= 3 * len(blocks) + len(got), f"{read} block rows read for a vault of {len(blocks)}"
