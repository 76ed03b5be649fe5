"""The dream as Procrastinate jobs: ``dream_vault`` (one vault; deferred by ``defer_dream``) and the hourly
``dream_schedule``, which returns overdue review items to PENDING and defers a dream for every vault whose local
time is its dream hour (04:00 by default, in the vault's time zone, UTC by default) and whose dual gate is open.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING
from uuid import UUID

from app.background.config import DreamConfig
from app.db.queries import Q
from app.worker.app import app
from app.worker.catalogue import DREAM as TASK
from app.worker.catalogue import DREAM_QUEUE as QUEUE
from app.worker.catalogue import defer_dream
from app.worker.context import services_of

if TYPE_CHECKING:
    from procrastinate import JobContext

log = logging.getLogger(__name__)


@app.task(name=TASK, queue=QUEUE, retry=1, pass_context=True)
async def dream_vault(context: JobContext, vault_id: str, dry_run: bool = False, force: bool = False, trigger: str = "schedule") -> dict:
    """Dream one vault (app/background/dream.py); a retry resumes after the last completed stage."""
    from app.background.dream import DreamLoop, GateClosed
    from app.read.vault_ref import vault_by_id

    services = services_of(context)
    vault = await vault_by_id(services.db, UUID(vault_id))
    try:
        outcome = await DreamLoop(services).run(vault, trigger=trigger, dry_run=dry_run, force=force)
    except GateClosed as exc:  # the gate closed between the schedule and now (another dream ran)
        log.info("%s", exc)
        return {"skipped": exc.message}
    return {"run": outcome.run["id"], "status": outcome.run["status"], "resumed": outcome.resumed}


@app.periodic(cron="0 * * * *", periodic_id="dream_schedule")
@app.task(name="dream_schedule", queue="maintenance", queueing_lock="dream_schedule", pass_context=True)
async def dream_schedule(context: JobContext, timestamp: int) -> dict:
    """Hourly: sweep the review queues, then defer a dream of every vault that is due."""
    services = services_of(context)
    cfg = DreamConfig()
    deferred = []
    async with services.db.transaction() as conn:
        cur = await conn.execute(Q.review_sweep,
                                 (None, cfg.review_ttl_days))
        overdue = (await cur.fetchone())["n"]
        cur = await conn.execute(Q.dream_due,
                                 (cfg.gate_min_hours, cfg.gate_min_sessions))
        for row in await cur.fetchall():
            if await defer_dream(conn, vault_id=row["vault_id"], trigger="schedule") is not None:
                deferred.append(row["name"])
    if deferred:
        log.info("dream deferred for %s", ", ".join(deferred))
    return {"deferred": deferred, "review_overdue": overdue}
