"""Lexeme statistics of the sparse rail (:mod:`app.read.lexeme_stats`): every 5 minutes, the lexemes of each
vault whose block count moved by more than 10% are recounted. Periodic, across vaults: nothing defers it."""

from __future__ import annotations

from app.worker.app import app
from app.worker.context import services_of
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from procrastinate import JobContext

TASK = "refresh_lexeme_stats"


@app.periodic(cron="*/5 * * * *", periodic_id=TASK)
@app.task(name=TASK, queue="maintenance", queueing_lock=TASK, pass_context=True)
async def refresh_lexeme_stats(context: JobContext, timestamp: int) -> dict:
    from app.read.lexeme_stats import refresh_due

    return await refresh_due(services_of(context))
