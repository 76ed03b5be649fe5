"""The jobs a request defers, by name: each task's name, queue and queueing lock, and its typed ``defer_*``.

Producers (the write track, the session track, the API) import this module, which depends on the database layer
only; the tasks themselves (``app/background/``) run with the worker's ``Services`` and register under these
names. So a producer never imports a task's module, and the worker's composition (``app.worker.context``) is not
reached from the request paths: before this module, ``services -> write.pipeline -> background.graph_build ->
worker.context -> services`` was an import cycle, hidden by function-level imports.

A job is deferred inside the caller's transaction with ``memvault.defer_job_v1``: it exists only if that
transaction commits (a memory and the job that builds its graph commit together).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any
from uuid import UUID

import psycopg

from app.db.queries import Q

GRAPH_BUILD, GRAPH_QUEUE = "build_graph", "graph"
PREFETCH, PREFETCH_QUEUE = "prefetch_for_turn", "prefetch"
DREAM, DREAM_QUEUE = "dream_vault", "dream"


def dream_lock(vault_id: UUID | str) -> str:
    """One waiting dream per vault."""
    return f"dream:{vault_id}"


async def defer_in(conn: psycopg.AsyncConnection, task_name: str, args: dict[str, Any], *,
                   queue: str = "default", queueing_lock: str | None = None, read: bool = True) -> int | None:
    """Queue a job on ``conn``'s open transaction: it exists only if that transaction commits. Called by the
    ``defer_<job>`` functions (which own the task's name, queue and lock).

    None: a job with the same ``queueing_lock`` is already waiting, and will do the work; or ``read`` is False:
    the job's id is not read, so on a pipelined connection (app/db/connector.py) the statement travels with the
    next one whose result is read, or with COMMIT, instead of a round trip of its own (an error still fails the
    transaction there)."""
    cur = await conn.execute(
        Q.defer_job,
        (task_name, json.dumps(args, default=str), queue, queueing_lock),
    )
    if not read:
        return None
    row = await cur.fetchone()
    value = row["id"] if isinstance(row, dict) else row[0]
    return None if value is None else int(value)


async def defer_graph_build(conn: psycopg.AsyncConnection, *, vault_id: UUID, block_ids: Iterable[int],
                            read: bool = True) -> int | None:
    """Queue the graph build of ``block_ids`` on ``conn``'s open transaction (app/background/graph_build.py);
    ``read``: see :func:`defer_in`."""
    return await defer_in(conn, GRAPH_BUILD, {"vault_id": str(vault_id), "block_ids": sorted(set(block_ids))},
                          queue=GRAPH_QUEUE, read=read)


async def defer_prefetch(conn: psycopg.AsyncConnection, *, vault_id: UUID, session_id: str,
                         read: bool = True) -> int | None:
    """Queue the Slow Thinker for ``session_id`` on ``conn``'s open transaction; None when one already waits
    (app/background/prefetch.py). ``read``: see :func:`defer_in`."""
    return await defer_in(conn, PREFETCH, {"vault_id": str(vault_id), "session_id": session_id},
                          queue=PREFETCH_QUEUE, queueing_lock=f"prefetch:{vault_id}:{session_id}", read=read)


async def defer_dream(conn: psycopg.AsyncConnection, *, vault_id: UUID, dry_run: bool = False,
                      force: bool = False, trigger: str = "schedule") -> int | None:
    """Queue a dream of ``vault_id`` on ``conn``'s transaction; None when one is already waiting for the vault
    (app/background/dream_job.py)."""
    return await defer_in(conn, DREAM, {"vault_id": str(vault_id), "dry_run": dry_run, "force": force,
                                        "trigger": trigger},
                          queue=DREAM_QUEUE, queueing_lock=dream_lock(vault_id))
