"""The review queue (seed 004): what the background track would not change alone waits here for a person.

Auto-approve when confidence > the vault's ``min_confidence`` (0.8) and impact < its ``max_impact`` (0.5); the
rest is queued (``review_enqueue_v1``). A reviewer may claim an item; past its due date a claim lapses and the item
returns to PENDING, and an unclaimed one stays PENDING with its overdue count raised (``review_sweep_v1``, hourly
and in every dream): nothing is dropped. Approving commits the proposal through the SQL function that owns that
change; every decision moves the vault's thresholds toward it (``review_decide_v1``).
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from app.background.config import DreamConfig
from app.db.connector import Database
from app.db.queries import Q


async def list_items(db: Database, vault_id: UUID, *, status: str | None = None, kind: str | None = None,
                     limit: int = 50, before: int | None = None) -> list[dict[str, Any]]:
    rows = await db.fetchall(Q.review_list,
                             (status, kind, limit, before), vault_id=vault_id)
    return [r["q"] for r in rows]


async def thresholds(db: Database, vault_id: UUID) -> list[dict[str, Any]]:
    cfg, out = DreamConfig(), []
    async with db.transaction(vault_id) as conn:
        for kind in ("conflict", "lint"):
            cur = await conn.execute(Q.review_thresholds, (kind, cfg.review_min_confidence, cfg.review_max_impact))
            out.append({"kind": kind, **(await cur.fetchone())})
    return out


async def claim(db: Database, vault_id: UUID, item_id: int, *, by: str, hours: float) -> dict[str, Any]:
    row = await db.fetchone(Q.review_claim,
                            (item_id, by, hours * 3600), vault_id=vault_id)
    return row["q"] if row else {}


async def decide(db: Database, vault_id: UUID, item_id: int, *, approve: bool, by: str,
                 note: str | None = None) -> dict[str, Any]:
    row = await db.fetchone(Q.review_decide, (item_id, approve, by, note),
                            vault_id=vault_id)
    return row["q"] if row else {}
