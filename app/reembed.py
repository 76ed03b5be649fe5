"""``memvault reembed --to NAME``: move a database to another embedder, resumably.

Vectors for the new embedder go into shadow columns in batches (an interrupted run resumes where it stopped);
recall keeps using the old vectors meanwhile; one transaction then switches columns and rebuilds the HNSW
indexes. Entities are re-embedded too. The read track's intent archetypes are keyed by embedder name and are
re-seeded by it on first use.
"""

from __future__ import annotations

from dataclasses import dataclass

import psycopg
from pgvector.psycopg import register_vector

from app.db.ann_index import MIN_BLOCKS
from app.models.base import Embedder


# The text a block's embedding was made from (WriteItem.embedding_text): its context line, then the memory.
BLOCK_EMBEDDING_TEXT = "concat_ws(E'\\n', metadata->>'context', normalized)"


@dataclass(frozen=True, slots=True)
class ReembedResult:
    blocks: int
    entities: int
    name: str
    dim: int


def _fill(conn: psycopg.Connection, table: str, text_col: str, embedder: Embedder, batch: int, progress) -> int:
    total = 0
    while True:
        rows = conn.execute(
            f"SELECT vault_id, id, {text_col} FROM memvault.{table} WHERE embedding_next IS NULL "  # noqa: S608
            "ORDER BY vault_id, id LIMIT %s", (batch,)).fetchall()
        if not rows:
            return total
        vectors = embedder.embed_documents([r[2] for r in rows])
        with conn.cursor() as cur:
            cur.executemany(f"UPDATE memvault.{table} SET embedding_next = %s WHERE vault_id = %s AND id = %s",  # noqa: S608
                            [(v, r[0], r[1]) for v, r in zip(vectors, rows, strict=True)])
        conn.commit()
        total += len(rows)
        progress(len(rows))


def reembed(url: str, embedder: Embedder, *, batch: int = 256, progress=lambda n: None) -> ReembedResult:
    with psycopg.connect(url) as conn:
        register_vector(conn)
        conn.execute("SELECT memvault.reembed_begin_v1(%s, %s)", (embedder.name, embedder.dim))
        conn.commit()
        register_vector(conn)  # the shadow column's type is new to this connection's adapters
        blocks = _fill(conn, "block", BLOCK_EMBEDDING_TEXT, embedder, batch, progress)
        entities = _fill(conn, "entity", "name", embedder, batch, progress)
        conn.execute("SELECT memvault.reembed_switch_v1()")
        # The vaults' own HNSW indexes went with the old column: build them again before search needs them.
        conn.execute("SELECT memvault.build_due_ann_indexes_v1(%s)", (MIN_BLOCKS,))
        conn.commit()
    return ReembedResult(blocks, entities, embedder.name, embedder.dim)


def pending(url: str) -> int:
    with psycopg.connect(url) as conn:
        has = conn.execute("SELECT next_name FROM memvault.embedder_config").fetchone()
        if not has or has[0] is None:
            return 0
        return conn.execute("SELECT count(*) FROM memvault.block WHERE embedding_next IS NULL").fetchone()[0]
