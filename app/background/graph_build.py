"""Graph build: after a write, the triples and entities of the blocks it created or changed go into the vault's
tables and its AGE graph (the write track's :class:`app.write.graph.GraphBuild`). Deferred by the write track in
the transaction that writes the blocks (a memory and the job that builds its graph commit together)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING
from uuid import UUID

from procrastinate import RetryStrategy

from app.worker.app import app
from app.worker.catalogue import GRAPH_BUILD as TASK
from app.worker.catalogue import GRAPH_QUEUE as QUEUE
from app.worker.context import services_of

if TYPE_CHECKING:
    from procrastinate import JobContext

log = logging.getLogger(__name__)


# Retried with a pause doubling from 4 s: an attempt that failed because the database was restarting or away
# (`memvault serve` rides that out) is tried again after it is back, not three times within the outage (the
# restart test saw a graph build fail for good that way). 8 attempts, 4 s to 8.5 min apart (~17 min in all).
@app.task(name=TASK, queue=QUEUE, retry=RetryStrategy(max_attempts=8, exponential_wait=2), pass_context=True)
async def build_graph(context: JobContext, vault_id: str, block_ids: list[int]) -> dict:
    from app.write.graph import GraphBuild

    result = await GraphBuild(services_of(context)).run(UUID(vault_id), block_ids)
    log.info("graph build for vault %s: %s", vault_id, result)
    return {"triples": result.triples, "entities_created": result.entities_created}
