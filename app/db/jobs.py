"""The database's own background job: the per-vault HNSW indexes (app/db/ann_index.py)."""

from __future__ import annotations

from app.worker.app import app
from app.worker.context import get_services


@app.periodic(cron="* * * * *", periodic_id="build_ann_indexes")
@app.task(name="build_ann_indexes", queue="maintenance", queueing_lock="build_ann_indexes")
async def build_ann_indexes(timestamp: int) -> dict:
    """Every minute: build the HNSW index of each vault that has grown past the threshold, drop the stale ones."""
    from app.db import ann_index

    done = await ann_index.apply((await get_services()).db, min_blocks=ann_index.MIN_BLOCKS)
    return {a.index_name: {"action": a.action, "blocks": a.blocks, "seconds": round(a.seconds, 1)} for a in done}
