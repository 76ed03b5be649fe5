"""Slow Thinker prefetch (:mod:`app.read.prefetch`): deferred by the session track in the transaction that
appends a turn, one waiting job per session. Fire-and-forget (seed 000): no retry, the next utterance brings a
new batch."""

from __future__ import annotations

import logging
from uuid import UUID

import psycopg

from app.worker.app import app, defer_in
from app.worker.context import get_services

log = logging.getLogger(__name__)

TASK = "prefetch_for_turn"
QUEUE = "prefetch"


async def defer_prefetch(conn: psycopg.AsyncConnection, *, vault_id: UUID, session_id: str) -> int | None:
    """Queue the Slow Thinker for ``session_id`` on ``conn``'s open transaction; None when one already waits."""
    return await defer_in(conn, TASK, {"vault_id": str(vault_id), "session_id": session_id}, queue=QUEUE,
                          queueing_lock=f"prefetch:{vault_id}:{session_id}")


@app.task(name=TASK, queue=QUEUE, retry=0)
async def prefetch_for_turn_job(vault_id: str, session_id: str) -> dict:
    from app.read.prefetch import prefetch_for_turn
    from app.read.vault_ref import vault_by_id

    services = await get_services()
    vault = await vault_by_id(services.db, UUID(vault_id))
    report = await prefetch_for_turn(services, vault, session_id)
    log.info("prefetch for vault %s session %s: %s", vault_id, session_id, report.reason)
    return {"admitted": report.admitted, "reason": report.reason, "stored": report.stored}
