"""What a vault costs to hold: disk (the database, the block table and its indexes, the vault's own HNSW index) and
memory (PostgreSQL's shared buffers and its processes' resident memory, the benchmark process's peak), for
``bench latency`` at scale (issue 32: a million memories).

PostgreSQL's processes are found from the benchmark's own backend (``pg_backend_pid()``: the embedded cluster
shares the host's process ids) and its parent, the postmaster: every child of the postmaster is the cluster's.
Their resident memory is split as Linux counts it: ``RssAnon`` (each process's private memory: sort and hash
areas, caches) summed, and ``RssShmem`` (the shared buffers a process touched) taken once, as its largest value:
summing it would count the same shared pages once per process. Where /proc is not readable (another host),
only the sizes and settings are reported.
"""

from __future__ import annotations

import resource
from pathlib import Path
from typing import Any

_MB = 2**20


def _status(pid: int) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        out[key] = value.strip()
    return out


def _kb(status: dict[str, str], key: str) -> int:
    return int(status.get(key, "0 kB").split()[0])


def postgres_memory(backend_pid: int) -> dict[str, Any] | None:
    """Resident memory of the cluster serving ``backend_pid`` (MB), or None when /proc does not show it."""
    try:
        postmaster = int(_status(backend_pid)["PPid"])
        children = Path(f"/proc/{postmaster}/task/{postmaster}/children").read_text().split()
    except (OSError, KeyError, ValueError):
        return None
    anon, shmem, n = _kb(_status(postmaster), "RssAnon"), 0, 1
    for pid in map(int, children):
        try:
            s = _status(pid)
        except OSError:  # ended meanwhile
            continue
        anon += _kb(s, "RssAnon")
        shmem = max(shmem, _kb(s, "RssShmem"))
        n += 1
    return {"processes": n, "private_rss_mb": round(anon / 1024, 1), "shared_rss_mb": round(shmem / 1024, 1)}


async def footprint(services: Any, vault: Any) -> dict[str, Any]:
    """Disk and memory after a run, in MB (see the module's docstring)."""
    row = await services.db.fetchone(
        "SELECT pg_backend_pid() AS pid, pg_database_size(current_database()) AS db, "
        "pg_table_size('memvault.block') AS block_table, pg_indexes_size('memvault.block') AS block_indexes, "
        "coalesce(pg_relation_size(to_regclass('memvault.' || memvault.ann_index_name_v1(%s))), 0) AS vault_hnsw, "
        "current_setting('shared_buffers') AS shared_buffers, "
        "current_setting('maintenance_work_mem') AS maintenance_work_mem", (vault.id,))
    mb = {k: round(int(row[k]) / _MB, 1) for k in ("db", "block_table", "block_indexes", "vault_hnsw")}
    return {
        "disk_mb": {"database": mb["db"], "block_table": mb["block_table"], "block_indexes": mb["block_indexes"],
                    "vault_hnsw_index": mb["vault_hnsw"]},
        "memory_mb": {"postgres_shared_buffers": row["shared_buffers"],
                      "postgres_maintenance_work_mem": row["maintenance_work_mem"],
                      "postgres": postgres_memory(int(row["pid"])),
                      # ru_maxrss is in kB on Linux: the writer's peak (its vector mirror included)
                      "bench_process_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                                                         1)},
    }
