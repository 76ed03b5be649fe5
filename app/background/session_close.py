"""Session close: every 5 minutes, the sessions idle for ``session_idle_close_s`` are closed (atomic units, a
summary and a thread map: :meth:`app.write.sessions.SessionTrack.close_idle`). Periodic, across vaults: nothing
defers it."""

from __future__ import annotations

import logging

from app.worker.app import app
from app.worker.context import get_services

log = logging.getLogger(__name__)

TASK = "close_idle_sessions"


@app.periodic(cron="*/5 * * * *", periodic_id=TASK)
@app.task(name=TASK, queue="sessions", queueing_lock=TASK)
async def close_idle_sessions(timestamp: int) -> int:
    services = await get_services()
    closed = await services.sessions.close_idle(services.settings.session_idle_close_s)
    if closed:
        log.info("closed %d idle sessions", closed)
    return closed
