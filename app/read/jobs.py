"""The read track's background jobs: Slow Thinker prefetch, deferred when a turn is appended, the periodic
recount of the sparse rail's lexeme statistics, and the second dense rail's embeddings (when configured).

Registered on the shared Procrastinate app; the worker imports this module through ``TASK_MODULES``. The write
track defers it (``defer_in(conn, "prefetch_for_turn", {...}, queue="prefetch", queueing_lock=...)``) in the
transaction that appends the turn. Fire-and-forget (seed 000): no retry, the next utterance brings a new batch.
"""

from __future__ import annotations

import logging
from uuid import UUID

from app.worker.app import app
from app.worker.context import get_services

log = logging.getLogger(__name__)

TASK_NAME = "prefetch_for_turn"
QUEUE = "prefetch"


@app.task(name=TASK_NAME, queue=QUEUE, retry=0)
async def prefetch_for_turn_job(vault_id: str, session_id: str) -> dict:
    from app.read.prefetch import prefetch_for_turn
    from app.read.vault_ref import vault_by_id

    services = await get_services()
    vault = await vault_by_id(services.db, UUID(vault_id))
    report = await prefetch_for_turn(services, vault, session_id)
    log.info("prefetch for vault %s session %s: %s", vault_id, session_id, report.reason)
    return {"admitted": report.admitted, "reason": report.reason, "stored": report.stored}


@app.periodic(cron="*/5 * * * *", periodic_id="refresh_lexeme_stats")
@app.task(name="refresh_lexeme_stats", queue="maintenance", queueing_lock="refresh_lexeme_stats")
async def refresh_lexeme_stats(timestamp: int) -> dict:
    """Every 5 minutes: recount the lexemes of each vault whose block count moved by more than 10%."""
    from app.read.lexeme_stats import refresh_due

    return await refresh_due(await get_services())


@app.periodic(cron="* * * * *", periodic_id="embed_rail2")
@app.task(name="embed_rail2", queue="maintenance", queueing_lock="embed_rail2")
async def embed_rail2(timestamp: int) -> dict:
    """Every minute, for at most 50 s: embed the blocks written since with the second rail's model (a no-op
    when ``rail2_embedder`` is ``none``)."""
    from app.read.rail2 import fill

    return (await fill(await get_services(), budget_s=50.0)).as_dict()
