"""Graph build: after a write, the triples and entities of the blocks it created or changed go into the vault's
tables and its AGE graph (the write track's :class:`app.write.graph.GraphBuild`). Deferred by the write track in
the transaction that writes the blocks (a memory and the job that builds its graph commit together)."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from uuid import UUID

import psycopg

from app.worker.app import app, defer_in
from app.worker.context import get_services

log = logging.getLogger(__name__)

TASK = "build_graph"
QUEUE = "graph"


async def defer_graph_build(conn: psycopg.AsyncConnection, *, vault_id: UUID, block_ids: Iterable[int]) -> int | None:
    """Queue the graph build of ``block_ids`` on ``conn``'s open transaction."""
    return await defer_in(conn, TASK, {"vault_id": str(vault_id), "block_ids": sorted(set(block_ids))}, queue=QUEUE)


@app.task(name=TASK, queue=QUEUE, retry=2)
async def build_graph(vault_id: str, block_ids: list[int]) -> dict:
    from app.write.graph import GraphBuild

    result = await GraphBuild(await get_services()).run(UUID(vault_id), block_ids)
    log.info("graph build for vault %s: %s", vault_id, result)
    return {"triples": result.triples, "entities_created": result.entities_created}
