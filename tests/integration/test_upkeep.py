"""Upkeep of a long-running database, with the clock moved: the logs' monthly partitions made ahead (rows that
reached the default partition moved out of it), old ones dropped by retention, the append-only audit log never
losing a row; vacuum and bloat in `memvault db stats` and /health."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime

import pytest

from app.background.log_partitions import maintain
from app.errors import InvalidInput
from tests.conftest import cli_env


def months(at: datetime, n: int) -> datetime:
    m = at.month - 1 + n
    return at.replace(year=at.year + m // 12, month=m % 12 + 1, day=15, hour=12)


async def partitions(services, log: str) -> list[str]:
    rows = await services.db.fetchall(
        "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
        "WHERE i.inhparent = %s::regclass ORDER BY 1", (f"memvault.{log}",))
    return [r["relname"] for r in rows]


def name(log: str, at: datetime) -> str:
    return f"{log}_{at:%Y%m}"


async def add_recall_row(services, vault, at: datetime) -> None:
    await services.db.fetchone("INSERT INTO memvault.recall_log (vault_id, at, query, intent, mode, thinking) "
                               "VALUES (%s, %s, 'q', 'fact', 'LOCAL', 'fast') RETURNING id", (vault.id, at))


async def rows_in(services, table: str) -> int:
    return (await services.db.fetchone(f"SELECT count(*) AS n FROM memvault.{table}"))["n"]


async def test_partitions_are_made_ahead_as_the_clock_moves(services, vault) -> None:
    now = datetime.now(UTC)
    assert name("recall_log", months(now, 2)) in await partitions(services, "recall_log")  # made at migration
    later = months(now, 7)
    assert name("recall_log", later) not in await partitions(services, "recall_log")
    await add_recall_row(services, vault, later)  # the job has not run for months: it lands in the default
    assert await rows_in(services, "recall_log_default") == 1

    done = await maintain(services, now=later)
    made = {(a.log, a.partition, a.action, a.moved_rows) for a in done}
    assert ("recall_log", name("recall_log", later), "created", 1) in made  # the stray row moved into its month
    for n in (0, 1, 2):
        assert ("audit_log", name("audit_log", months(later, n)), "created", 0) in made
        assert name("recall_log", months(later, n)) in await partitions(services, "recall_log")
    assert await rows_in(services, "recall_log_default") == 0
    assert await rows_in(services, name("recall_log", later)) == 1
    assert await maintain(services, now=later) == []  # idempotent: nothing more to do at the same time


async def test_retention_drops_old_months_and_keeps_the_audit_log(services, vault) -> None:
    now = datetime.now(UTC)
    old = months(now, -15)
    await maintain(services, now=old, months_ahead=1)  # as if the service ran back then
    await add_recall_row(services, vault, old)
    for log in ("recall_log", "audit_log"):
        assert name(log, old) in await partitions(services, log)

    dropped = [a for a in await maintain(services) if a.action == "dropped"]  # recall_log 12 months, audit_log all
    assert {(a.log, a.partition) for a in dropped} == {("recall_log", name("recall_log", old)),
                                                      ("recall_log", name("recall_log", months(old, 1)))}
    assert name("recall_log", old) not in await partitions(services, "recall_log")
    assert name("recall_log", months(now, -12)) not in await partitions(services, "recall_log")  # never made
    assert name("audit_log", old) in await partitions(services, "audit_log")  # kept: append-only by default

    services.settings = services.settings.model_copy(update={"log_retention_months": {"audit_log": 6}})
    dropped = [a for a in await maintain(services) if a.action == "dropped"]
    assert {a.partition for a in dropped} == {name("audit_log", old), name("audit_log", months(old, 1))}


async def test_audit_rows_in_the_default_partition_are_never_deleted(services, vault) -> None:
    later = months(datetime.now(UTC), 9)
    await services.db.fetchone("INSERT INTO memvault.audit_log (vault_id, at, actor, action) "
                               "VALUES (%s, %s, 'test', 'test.stray') RETURNING id", (vault.id, later))
    done = await maintain(services, now=later)
    assert ("audit_log", name("audit_log", later), "blocked") in {(a.log, a.partition, a.action) for a in done}
    assert await rows_in(services, "audit_log_default") == 1  # still there, still read through audit_log
    assert (await services.db.fetchone("SELECT count(*) AS n FROM memvault.audit_log WHERE action = 'test.stray'"
                                       ))["n"] == 1
    summary = await services.db.fetchone("SELECT * FROM memvault.upkeep_summary_v1()")
    assert summary["log_months_ahead"] >= 2


async def test_bad_months_ahead_is_refused(services) -> None:
    with pytest.raises(InvalidInput, match="months ahead"):
        await maintain(services, months_ahead=99)


def test_the_job_is_registered() -> None:
    import app.background.jobs  # noqa: F401 - registers every job
    from app.worker.app import app

    assert "maintain_log_partitions" in app.tasks
    assert any(p.task.name == "maintain_log_partitions" for p in app.periodic_registry.periodic_tasks.values())


async def test_db_stats_and_health_show_vacuum_and_bloat(services, vault, db_url, client) -> None:
    out = subprocess.run([sys.executable, "-m", "app.cli", "db", "stats", "--json"], env=cli_env(db_url),
                         capture_output=True, text=True, check=True)
    stats = json.loads(out.stdout)
    tables = {t["name"]: t for t in stats["tables"]}
    assert {"block", "vault", "recall_log_default"} <= set(tables)
    assert tables["block"]["bytes"] > 0 and all(t["bytes"] >= 0 for t in tables.values())
    assert {"block_pkey"} <= {i["name"] for i in stats["indexes"]}
    assert stats["summary"]["log_months_ahead"] == 2
    text = subprocess.run([sys.executable, "-m", "app.cli", "db", "stats", "--top", "3"], env=cli_env(db_url),
                          capture_output=True, text=True, check=True).stdout
    assert "log partitions ahead: 2 month(s)" in text and "dead%" in text
    health = (await client.get("/health")).json()
    assert health["upkeep"]["log_months_ahead"] == 2 and health["upkeep"]["tables_needing_vacuum"] >= 0
    assert health["replicas"] == []
