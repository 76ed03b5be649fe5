"""Physical erasure (``memvault purge --physical``): after a purge has deleted the rows, make PostgreSQL's files
forget them too.

A DELETE only marks a row version dead; its bytes stay in the table's and its indexes' pages (plain VACUUM frees
the space for reuse, it does not overwrite it) and in the WAL segments that recorded its insertion, until a page is
rewritten and a segment recycled and overwritten. This does, as the tables' owner, on one autocommit connection:

1. every table of the database that is not PostgreSQL's own rewritten (``VACUUM (FULL, ANALYZE)``: a new file
   holding the live rows; the old file is truncated at commit and unlinked at the next checkpoint), then
   ``pg_statistic`` (ANALYZE's sample values). Each rewrite holds an ACCESS EXCLUSIVE lock on its table while it
   runs: requests on that table wait (minutes on a large database): a maintenance operation.
2. ``wal_recycle`` off for the duration (ALTER SYSTEM, reloaded), so segments a checkpoint frees are removed, not
   renamed for reuse with their bytes in them; then CHECKPOINT, and CHECKPOINT + ``pg_switch_wal()`` until no
   segment made ahead of time from an old one is left after the one being written; ``wal_recycle`` reset.

Steps 1b and 2 need a superuser (or ``pg_checkpoint`` and EXECUTE on ``pg_switch_wal``); a login without them
gets the tables rewritten and a report of what it could not do. What no SQL reaches is listed in
docs/operations.md (backups, WAL archives and standbys, the server log, the file system's freed blocks).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from app.db.connector import sync_connection
from app.db.queries import Q

MAX_SWITCHES = 256  # segments made ahead of time are bounded by max_wal_size; this bounds the loop whatever


@dataclass
class ScrubReport:
    tables: int = 0
    seconds: float = 0.0
    wal_switches: int = 0
    wal_segments_left: int | None = None
    skipped: list[str] = field(default_factory=list)  # what this login could not do, and why

    def summary(self) -> str:
        text = (f"rewrote {self.tables} tables (VACUUM FULL), {self.wal_switches} WAL switches"
                + (f", {self.wal_segments_left} WAL segments left" if self.wal_segments_left is not None else "")
                + f", in {self.seconds:.1f} s")
        return text + "".join(f"\n  not done: {s}" for s in self.skipped)


def scrub(url: str) -> ScrubReport:
    """Rewrite every table and push the WAL past everything written before (``url``: the tables' owner)."""
    report = ScrubReport()
    started = time.monotonic()
    with sync_connection(url, autocommit=True) as conn:
        can = conn.execute(Q.scrub_privileges).fetchone()
        superuser, checkpoint, switch_wal = can
        for (statement,) in conn.execute(Q.scrub_statements, {"catalog": superuser}).fetchall():
            conn.execute(statement)
            report.tables += 1
        if not superuser:
            report.skipped.append("pg_statistic not rewritten (needs a superuser): old ANALYZE samples may stay")
        if not (checkpoint and switch_wal):
            report.skipped.append("no CHECKPOINT / pg_switch_wal (needs a superuser, or pg_checkpoint and EXECUTE "
                                  "on pg_switch_wal): the old pages and WAL stay until the server recycles them")
        else:
            report.wal_switches, report.wal_segments_left = _push_wal(conn, recycle_off=superuser)
            if not superuser:
                report.skipped.append("wal_recycle not turned off (needs a superuser): freed WAL segments are "
                                      "recycled with their old bytes until overwritten")
    report.seconds = time.monotonic() - started
    return report


def _push_wal(conn, *, recycle_off: bool) -> tuple[int, int]:
    """CHECKPOINT (old relation files unlinked, redo moved past the rewrite), then close the segment being written
    and checkpoint again until no segment made ahead of time is left; the number of switches, and of segment
    files left."""
    if recycle_off:
        conn.execute(Q.scrub_wal_recycle_off)
        conn.execute(Q.reload_conf)
        time.sleep(0.5)  # the checkpointer reads the reloaded setting before the next checkpoint it is asked for
    switches = 0
    try:
        conn.execute(Q.checkpoint)
        while True:
            conn.execute(Q.switch_wal)
            conn.execute(Q.checkpoint)  # a record in the new segment; the ones before it are freed
            switches += 1
            segments = conn.execute(Q.wal_segments).fetchone()
            if segments[1] == 0 or switches >= MAX_SWITCHES:
                return switches, segments[2]
    finally:
        if recycle_off:
            conn.execute(Q.scrub_wal_recycle_reset)
            conn.execute(Q.reload_conf)
