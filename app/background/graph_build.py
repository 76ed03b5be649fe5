"""Graph build: after a write, the triples and entities of the blocks it created or changed go into the vault's
tables and its AGE graph (the write track's :class:`app.write.graph.GraphBuild`). Deferred by the write track in
the transaction that writes the blocks (a memory and the job that builds its graph commit together)."""

from __future__ import annotations

import logging
from uuid import UUID

from app.worker.app import app
from app.worker.catalogue import GRAPH_BUILD as TASK
from app.worker.catalogue import GRAPH_QUEUE as QUEUE
from app.worker.context import get_services

log = logging.getLogger(__name__)


@app.task(name=TASK, queue=QUEUE, retry=2)
async def build_graph(vault_id: str, block_ids: list[int]) -> dict:
    from app.write.graph import GraphBuild

    result = await GraphBuild(await get_services()).run(UUID(vault_id), block_ids)
    log.info("graph build for vault %s: %s", vault_id, result)
    return {"triples": result.triples, "entities_created": result.entities_created}
