"""The Procrastinate app: the background track's job queue, in the same PostgreSQL.

Jobs are deferred inside the caller's transaction with ``memvault.defer_job_v1`` (see ``defer_in``), so a
memory and the job that builds its graph commit together. The jobs themselves live in ``app/background/`` (one
module each, with the typed ``defer_<job>`` a producer imports); ``app.background.jobs`` imports them all, and the
worker imports it.
"""

from __future__ import annotations

import json
from typing import Any

import procrastinate
import psycopg

from app.db.queries import Q

app = procrastinate.App(connector=procrastinate.PsycopgConnector(), import_paths=["app.background.jobs"])


async def act_as_job(call_next, context, worker) -> Any:
    """Worker middleware: what a job changes is audited as worker:<task name>."""
    from app.db.connector import act_as

    act_as(f"worker:{context.job.task_name}")
    return await call_next()


def connector_for(url: str) -> procrastinate.PsycopgConnector:
    return procrastinate.PsycopgConnector(conninfo=url)


async def defer_in(conn: psycopg.AsyncConnection, task_name: str, args: dict[str, Any], *,
                   queue: str = "default", queueing_lock: str | None = None) -> int | None:
    """Queue a job on ``conn``'s open transaction: it exists only if that transaction commits. Called by the
    ``defer_<job>`` functions of ``app/background/`` only (they own the task's name, queue and lock).

    None: a job with the same ``queueing_lock`` is already waiting, and will do the work."""
    cur = await conn.execute(
        Q.defer_job,
        (task_name, json.dumps(args, default=str), queue, queueing_lock),
    )
    row = await cur.fetchone()
    value = row["id"] if isinstance(row, dict) else row[0]
    return None if value is None else int(value)
