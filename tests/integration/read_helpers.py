"""Test helpers for the read track: put blocks straight into a vault (embedding + tsvector computed like the
write track does), without the write track's gates, so tests control exactly what is stored."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

INSERT = """
INSERT INTO memvault.block (vault_id, kind, category, content, normalized, summary, tsv, fingerprint, content_hash,
    token_count, session_id, source_kind, trust_score, confidence, valid_at, embedding, tier, digest, ppr_score,
    quarantine_tags)
VALUES (%(vault_id)s, %(kind)s, %(category)s, %(content)s, %(content)s, %(summary)s,
    memvault.sparse_document_v1(%(content)s), 0, %(hash)s, %(tokens)s, %(session_id)s, %(source_kind)s, %(trust)s,
    %(confidence)s, %(valid_at)s, %(embedding)s, %(tier)s, %(digest)s, %(ppr)s, %(tags)s)
RETURNING id
"""

USAGE = """
INSERT INTO memvault.block_usage (vault_id, block_id, access_count, feedback_up, feedback_down)
VALUES (%(vault_id)s, %(id)s, %(access_count)s, %(up)s, %(down)s)
"""


@dataclass
class Mem:
    content: str
    days_ago: float = 1.0
    source_kind: str = "user"
    trust: float = 0.8
    confidence: float = 0.8
    session_id: str | None = "s1"
    category: str | None = "Fact"
    summary: str | None = None
    tier: str = "hot"
    digest: str | None = None
    access_count: int = 0
    ppr: float = 0.0
    tags: tuple[str, ...] = ()
    up: int = 0
    down: int = 0
    kind: str = "memory"


async def put_blocks(services, vault, mems: list[Mem | str], *, now: datetime | None = None) -> list[int]:
    now = now or datetime.now(UTC)
    mems = [Mem(m) if isinstance(m, str) else m for m in mems]
    vecs = services.embedder.embed_documents([m.content for m in mems])
    ids = []
    async with services.db.transaction(vault.id) as conn:
        for m, v in zip(mems, vecs):
            params: dict[str, Any] = {
                "vault_id": vault.id, "kind": m.kind, "category": m.category, "content": m.content,
                "summary": m.summary, "hash": hashlib.sha256(m.content.encode()).digest(),
                "tokens": len(m.content) // 4, "session_id": m.session_id, "source_kind": m.source_kind,
                "trust": m.trust, "confidence": m.confidence, "valid_at": now - timedelta(days=m.days_ago),
                "embedding": v, "tier": m.tier, "digest": m.digest, "access_count": m.access_count, "ppr": m.ppr,
                "tags": list(m.tags), "up": m.up, "down": m.down,
            }
            cur = await conn.execute(INSERT, params)
            ids.append((await cur.fetchone())["id"])
            if m.access_count or m.up or m.down:
                await conn.execute(USAGE, {**params, "id": ids[-1]})
    return ids


async def put_graph(services, vault, entities: list[str], triples: list[tuple[str, str, str, int]]) -> dict[str, int]:
    """Entities and triples (subject, predicate, object, evidence block id) in the tables and the vault's AGE graph,
    as the graph job leaves them; returns each entity's id."""
    ids: dict[str, int] = {}
    async with services.db.transaction(vault.id) as conn:
        for name in entities:
            cur = await conn.execute("INSERT INTO memvault.entity (vault_id, name, canonical_key) VALUES (%s, %s, %s) "
                                     "RETURNING id", (vault.id, name, name.lower()))
            ids[name] = (await cur.fetchone())["id"]
        edges = []
        for s, p, o, bid in triples:
            cur = await conn.execute(
                "INSERT INTO memvault.triple (vault_id, subject_id, predicate, object_id, evidence_block_id, confidence,"
                " valid_at) VALUES (%s, %s, %s, %s, %s, 0.9, now() - interval '1 day') RETURNING id",
                (vault.id, ids[s], p, ids[o], bid))
            edges.append({"s": ids[s], "o": ids[o], "p": p, "t": (await cur.fetchone())["id"], "b": bid})
    await services.db.fetchone("SELECT memvault.graph_add_v1(%s, %s::jsonb, %s::jsonb) AS n", (
        vault.id, json.dumps([{"id": i, "name": n} for n, i in ids.items()]), json.dumps(edges)))
    return ids
