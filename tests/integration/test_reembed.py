"""`memvault reembed`: shadow vectors filled resumably, recall on the old vectors until one switch."""

from __future__ import annotations

from datetime import UTC, datetime

import psycopg
import pytest
from pgvector.psycopg import register_vector

from app.models.embedders.hashing import HashEmbedder
from app.reembed import pending, reembed

TEXTS = ["I live in Taipei", "My sister Mia plays the cello", "I switched to a standing desk",
         "Our team ships on Fridays", "我每天早上喝咖啡"]


def _seed(url: str, embedder) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        register_vector(conn)
        vid = conn.execute("SELECT id FROM memvault.create_vault_v1('re')").fetchone()[0]
        for text, vec in zip(TEXTS, embedder.embed_documents(TEXTS), strict=True):
            conn.execute(
                """INSERT INTO memvault.block (vault_id, content, normalized, embedding, tsv, fingerprint, content_hash,
                       source_kind, trust_score, confidence, valid_at)
                   VALUES (%s, %s, %s, %s, memvault.sparse_document_v1(%s), 0, '\\x00', 'user', 0.6, 0.8, %s)""",
                (vid, text, text, vec, text, datetime(2026, 1, 1, tzinfo=UTC)))


def test_reembed_moves_the_database_and_is_resumable(db_url: str, services) -> None:
    _seed(db_url, services.embedder)
    target = HashEmbedder(64)
    calls = []

    class Flaky(HashEmbedder):
        """Fails on its second batch: the first run stops half-way, as after a crash."""

        def embed_documents(self, texts):
            calls.append(len(texts))
            if len(calls) == 2:
                raise RuntimeError("power cut")
            return super().embed_documents(texts)

    with pytest.raises(RuntimeError, match="power cut"):
        reembed(db_url, Flaky(64), batch=2)
    assert pending(db_url) == 3  # 2 of 5 done
    with psycopg.connect(db_url) as conn:
        name, dim, next_name = conn.execute("SELECT name, dim, next_name FROM memvault.embedder_config").fetchone()
        assert (name, dim) == (services.embedder.name, services.embedder.dim)  # old vectors still in use
        assert next_name == target.name
    result = reembed(db_url, target, batch=2)
    assert (result.name, result.dim, result.blocks) == (target.name, 64, 3)
    with psycopg.connect(db_url) as conn:
        register_vector(conn)
        assert conn.execute("SELECT name, dim, next_name FROM memvault.embedder_config").fetchone() == \
            (target.name, 64, None)
        q = target.embed_query("where do I live? Taipei")
        top = conn.execute("SELECT content FROM memvault.block ORDER BY embedding <=> %s LIMIT 1", (q,)).fetchone()
        assert top[0] == "I live in Taipei"
        assert conn.execute("SELECT count(*) FROM pg_indexes WHERE indexname = 'entity_embedding_hnsw'").fetchone()[0] == 1
