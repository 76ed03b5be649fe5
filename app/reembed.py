"""``memvault reembed --to NAME``: move a database to another embedder, resumably.

Vectors for the new embedder go into shadow columns in batches (an interrupted run resumes where it stopped);
recall keeps using the old vectors meanwhile; one transaction then switches columns and rebuilds the HNSW
indexes. Entities are re-embedded too. The read track's intent archetypes are keyed by embedder name and are
re-seeded by it on first use.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import psycopg
from pgvector.psycopg import register_vector

from app.db.ann_index import MIN_BLOCKS
from app.db.connector import sync_connection
from app.db.queries import Q, Query
from app.models.base import Embedder
from app.write.items import embedding_text


@dataclass(frozen=True, slots=True)
class ReembedResult:
    blocks: int
    entities: int
    name: str
    dim: int


def _block_text(row: dict[str, Any]) -> str:
    return embedding_text(row["context"], row["normalized"])


def _entity_text(row: dict[str, Any]) -> str:
    return row["name"]


def _fill(conn: psycopg.Connection, due: Query, put: Query, text: Callable[[dict[str, Any]], str],
          embedder: Embedder, batch: int, progress) -> int:
    total = 0
    while True:
        rows = conn.execute(due, (batch,)).fetchall()
        if not rows:
            return total
        vectors = embedder.embed_documents([text(r) for r in rows])
        with conn.cursor() as cur:
            cur.executemany(put, [(v, r["vault_id"], r["id"]) for v, r in zip(vectors, rows, strict=True)])
        conn.commit()
        total += len(rows)
        progress(len(rows))


def reembed(url: str, embedder: Embedder, *, batch: int = 256, progress=lambda n: None) -> ReembedResult:
    from psycopg.rows import dict_row

    with sync_connection(url, row_factory=dict_row) as conn:
        register_vector(conn)
        conn.execute(Q.reembed_begin, (embedder.name, embedder.dim))
        conn.commit()
        register_vector(conn)  # the shadow column's type is new to this connection's adapters
        blocks = _fill(conn, Q.reembed_blocks_due, Q.reembed_block_put, _block_text, embedder, batch, progress)
        entities = _fill(conn, Q.reembed_entities_due, Q.reembed_entity_put, _entity_text, embedder, batch, progress)
        conn.execute(Q.reembed_switch)
        # The vaults' own HNSW indexes went with the old column: build them again before search needs them.
        conn.execute(Q.build_due_ann_indexes, (MIN_BLOCKS,))
        conn.commit()
    return ReembedResult(blocks, entities, embedder.name, embedder.dim)


def pending(url: str) -> int:
    with sync_connection(url) as conn:
        has = conn.execute(Q.embedder_next).fetchone()
        if not has or has[0] is None:
            return 0
        return conn.execute(Q.reembed_pending).fetchone()[0]
