"""The write track's background jobs (Procrastinate): graph build, and closing idle sessions."""

from __future__ import annotations

import logging
from uuid import UUID

from app.worker.app import app
from app.worker.context import get_services

log = logging.getLogger(__name__)


@app.task(name="build_graph", queue="graph", retry=2)
async def build_graph(vault_id: str, block_ids: list[int]) -> dict:
    from app.write.graph import GraphBuild

    result = await GraphBuild(await get_services()).run(UUID(vault_id), block_ids)
    log.info("graph build for vault %s: %s", vault_id, result)
    return {"triples": result.triples, "entities_created": result.entities_created}


@app.periodic(cron="*/5 * * * *", periodic_id="close_idle_sessions")
@app.task(name="close_idle_sessions", queue="sessions", queueing_lock="close_idle_sessions")
async def close_idle_sessions(timestamp: int) -> int:
    services = await get_services()
    closed = await services.sessions.close_idle(services.settings.session_idle_close_s)
    if closed:
        log.info("closed %d idle sessions", closed)
    return closed
