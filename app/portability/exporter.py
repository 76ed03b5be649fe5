"""Export one vault as JSONL lines, streamed from a server-side cursor (memvault.export_rows_v1)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime

from app.db.queries import Q
from app.portability.format import FORMAT, VERSION
from app.services import Services
from app.vaults import Vault

BATCH = 500


def _line(obj: dict) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=str) + "\n"


async def export_vault(services: Services, vault: Vault, *, embeddings: bool = False) -> AsyncIterator[str]:
    """The vault's lines: header, rows, end. One statement (one snapshot), read ``BATCH`` rows at a time."""
    embedder = services.embedder
    yield _line({"type": "header", "format": FORMAT, "version": VERSION, "vault": vault.name,
                 "embedder": embedder.name, "dim": embedder.dim, "embeddings": embeddings,
                 "exported_at": datetime.now(UTC).isoformat()})
    counts: dict[str, int] = {}
    async with services.db.transaction(vault.id) as conn:
        cur = conn.cursor(name="memvault_export")
        await cur.execute(Q.export_rows, (vault.id, embeddings))
        while rows := await cur.fetchmany(BATCH):
            chunk = []
            for r in rows:
                counts[r["kind"]] = counts.get(r["kind"], 0) + 1
                chunk.append(_line({"type": r["kind"], **r["data"]}))
            yield "".join(chunk)
        await cur.close()
    yield _line({"type": "end", "counts": counts})
