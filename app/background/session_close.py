"""Session close: every 5 minutes, the sessions idle for ``session_idle_close_s`` are closed (atomic units, a
summary and a thread map: :meth:`app.write.sessions.SessionTrack.close_idle`). Periodic, across vaults: nothing
defers it."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from app.worker.app import app
from app.worker.context import services_of

if TYPE_CHECKING:
    from procrastinate import JobContext

log = logging.getLogger(__name__)

TASK = "close_idle_sessions"


@app.periodic(cron="*/5 * * * *", periodic_id=TASK)
@app.task(name=TASK, queue="sessions", queueing_lock=TASK, pass_context=True)
async def close_idle_sessions(context: JobContext, timestamp: int) -> int:
    services = services_of(context)
    closed = await services.sessions.close_idle(services.settings.session_idle_close_s)
    if closed:
        log.info("closed %d idle sessions", closed)
    return closed
