"""Per-vault HNSW indexes (:mod:`app.db.ann_index`): every minute, the index of each vault grown past the
threshold is built and the stale ones dropped. Periodic, across vaults: nothing defers it."""

from __future__ import annotations

from app.worker.app import app
from app.worker.context import services_of
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from procrastinate import JobContext

TASK = "build_ann_indexes"


@app.periodic(cron="* * * * *", periodic_id=TASK)
@app.task(name=TASK, queue="maintenance", queueing_lock=TASK, pass_context=True)
async def build_ann_indexes(context: JobContext, timestamp: int) -> dict:
    from app.db import ann_index

    done = await ann_index.apply(services_of(context).db, min_blocks=ann_index.MIN_BLOCKS)
    return {a.index_name: {"action": a.action, "blocks": a.blocks, "seconds": round(a.seconds, 1)} for a in done}
