"""Stalled jobs: a worker that dies in the middle of a job (SIGKILL, out of memory, a lost machine) leaves it
``doing`` for ever. Workers send a heartbeat (``worker_heartbeat_s``); the jobs of a worker whose heartbeat is
older than ``worker_stalled_s`` are put back in the queue, by every worker when it starts and by this periodic
job every minute (Procrastinate's documented recipe: ``job_manager.get_stalled_jobs`` + ``retry_job``).

A retried job runs again from the start, so every job must be safe to run twice: the graph build skips triples
it already recorded (app/write/graph.py); the others recompute state."""

from __future__ import annotations

import logging

from procrastinate import JobContext
from procrastinate.manager import JobManager

from app.worker.app import app
from app.worker.context import services_of

log = logging.getLogger(__name__)


async def retry_stalled_jobs(job_manager: JobManager, *, seconds_since_heartbeat: float) -> list[int]:
    """Put the jobs of workers silent for ``seconds_since_heartbeat`` back in the queue; their ids."""
    retried = []
    for job in await job_manager.get_stalled_jobs(seconds_since_heartbeat=seconds_since_heartbeat):
        await job_manager.retry_job(job)
        assert job.id is not None
        retried.append(job.id)
    if retried:
        log.warning("retried %d stalled jobs (their worker stopped sending heartbeats): %s", len(retried), retried)
    return retried


@app.periodic(cron="* * * * *", periodic_id="retry_stalled_jobs")
@app.task(name="retry_stalled_jobs", queue="maintenance", queueing_lock="retry_stalled_jobs", pass_context=True)
async def retry_stalled(context: JobContext, timestamp: int) -> list[int]:
    services = services_of(context)
    return await retry_stalled_jobs(context.app.job_manager,
                                    seconds_since_heartbeat=services.settings.worker_stalled_s)
