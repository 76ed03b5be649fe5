"""Upkeep of the partitioned logs (``recall_log``, ``audit_log``: one partition a month): every day, this month and
the next two get their partitions ahead of time (rows never land in the default partition while the job runs), and
months past ``log_retention_months`` are dropped (sql/idempotent/160-upkeep.sql). Periodic, across vaults."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from app.db.queries import Q
from app.worker.app import app
from app.worker.context import services_of

if TYPE_CHECKING:
    from procrastinate import JobContext

    from app.services import Services

log = logging.getLogger(__name__)

TASK = "maintain_log_partitions"
MONTHS_AHEAD = 2


@dataclass(frozen=True, slots=True)
class PartitionAction:
    log: str
    partition: str
    action: str  # created, dropped, blocked (audit_log rows of that month sit in the default partition)
    moved_rows: int


async def maintain(services: Services, *, now: datetime | None = None,
                   months_ahead: int = MONTHS_AHEAD) -> list[PartitionAction]:
    """Make the partitions ahead of ``now`` (default: the database's clock) and drop those past retention."""
    rows = await services.writer.fetchall(Q.maintain_log_partitions, {
        "now": now, "months_ahead": months_ahead, "keep": json.dumps(services.settings.log_retention_months)})
    done = [PartitionAction(r["log"], r["partition"], r["action"], int(r["moved_rows"])) for r in rows]
    for a in done:
        (log.warning if a.action == "blocked" else log.info)("log partition %s: %s (%d rows moved)", a.partition,
                                                            a.action, a.moved_rows)
    return done


@app.periodic(cron="17 3 * * *", periodic_id=TASK)
@app.task(name=TASK, queue="maintenance", queueing_lock=TASK, pass_context=True)
async def maintain_log_partitions(context: JobContext, timestamp: int) -> list[dict]:
    done = await maintain(services_of(context))
    return [{"partition": a.partition, "action": a.action, "moved_rows": a.moved_rows} for a in done]
