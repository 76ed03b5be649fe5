"""The second dense rail's vectors (:mod:`app.read.rail2`): every minute, for at most 50 s, the blocks written
since are embedded with the second model (a no-op when ``rail2_embedder`` is ``none``). Periodic."""

from __future__ import annotations

from app.worker.app import app
from app.worker.context import services_of
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from procrastinate import JobContext

TASK = "embed_rail2"


@app.periodic(cron="* * * * *", periodic_id=TASK)
@app.task(name=TASK, queue="maintenance", queueing_lock=TASK, pass_context=True)
async def embed_rail2(context: JobContext, timestamp: int) -> dict:
    from app.read.rail2 import fill

    return (await fill(services_of(context), budget_s=50.0)).as_dict()
