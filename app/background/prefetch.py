"""Slow Thinker prefetch (:mod:`app.read.prefetch`): deferred by the session track in the transaction that
appends a turn, one waiting job per session. Fire-and-forget (seed 000): no retry, the next utterance brings a
new batch."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING
from uuid import UUID

from app.worker.app import app
from app.worker.catalogue import PREFETCH as TASK
from app.worker.catalogue import PREFETCH_QUEUE as QUEUE
from app.worker.context import services_of

if TYPE_CHECKING:
    from procrastinate import JobContext

log = logging.getLogger(__name__)


@app.task(name=TASK, queue=QUEUE, retry=0, pass_context=True)
async def prefetch_for_turn_job(context: JobContext, vault_id: str, session_id: str) -> dict:
    from app.read.prefetch import prefetch_for_turn
    from app.read.vault_ref import vault_by_id

    services = services_of(context)
    vault = await vault_by_id(services.db, UUID(vault_id))
    report = await prefetch_for_turn(services, vault, session_id)
    log.info("prefetch for vault %s session %s: %s", vault_id, session_id, report.reason)
    return {"admitted": report.admitted, "reason": report.reason, "stored": report.stored}
