"""The Procrastinate app: the background track's job queue, in the same PostgreSQL.

Jobs are deferred inside the caller's transaction with ``memvault.defer_job_v1`` (``defer_in``), so a memory
and the job that builds its graph commit together. What a request defers is named in ``app.worker.catalogue``
(its typed ``defer_<job>``, which producers import); the jobs themselves live in ``app/background/`` (one module
each); ``app.background.jobs`` imports them all, and the worker imports it.
"""

from __future__ import annotations

from typing import Any

import procrastinate

from app.worker.catalogue import defer_in  # noqa: F401 - the primitive, re-exported for the tasks

app = procrastinate.App(connector=procrastinate.PsycopgConnector(), import_paths=["app.background.jobs"])


async def act_as_job(call_next, context, worker) -> Any:
    """Worker middleware: what a job changes is audited as worker:<task name>."""
    from app.db.connector import act_as

    act_as(f"worker:{context.job.task_name}")
    return await call_next()


def connector_for(url: str) -> procrastinate.PsycopgConnector:
    return procrastinate.PsycopgConnector(conninfo=url)
