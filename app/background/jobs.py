"""The background track's jobs (Procrastinate): graph centrality for PPRBoost, and the modules of the dream loop,
registered by importing them."""

from __future__ import annotations

from app.background import dream_job  # noqa: F401  (dream_vault, dream_schedule)
from app.worker.app import app
from app.worker.context import get_services


@app.periodic(cron="*/10 * * * *", periodic_id="graph_centrality")
@app.task(name="graph_centrality", queue="maintenance", queueing_lock="graph_centrality")
async def graph_centrality(timestamp: int) -> list[dict]:
    """Every 10 minutes: rescore the blocks of each vault whose graph changed (app/background/centrality.py)."""
    from app.background.centrality import GraphCentrality

    return [r.as_dict() for r in await GraphCentrality((await get_services()).db).score_due()]
