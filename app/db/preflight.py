"""What `make serve` and `make test` check before the long install: `python3 -m app.db.preflight`.

It runs with the bare interpreter, before any dependency is installed, so it uses the standard library only (and
reads the two environment variables it needs itself: app/settings.py needs pydantic, which is not there yet). One
line per check; exit 1 with what to do when the machine cannot get a working service, so nobody waits minutes
for pip only to learn that.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

MIN_PYTHON = (3, 11)
MIN_FREE_GB = 2.0  # the virtual environment (~1.1 GB) and the server's root filesystem (~0.6 GB)


def checks() -> list[tuple[bool, str]]:
    """(ok, line) for each prerequisite, in order."""
    from app.db import cluster, rootfs

    results: list[tuple[bool, str]] = []
    ok = sys.version_info >= MIN_PYTHON
    results.append((ok, f"Python {sys.version.split()[0]}" + ("" if ok else
                    f": need >= {'.'.join(map(str, MIN_PYTHON))} (set PYTHON=/path/to/python3.11 for make)")))
    try:
        import ensurepip  # noqa: F401
        import venv  # noqa: F401
        results.append((True, "venv and ensurepip"))
    except ImportError:
        results.append((False, "venv/ensurepip missing: install python3-venv (Debian/Ubuntu) or use another Python"))
    data_dir = Path(os.environ.get("MEMVAULT_DATA_DIR") or Path.home() / ".local/share/memvault").expanduser()
    probe = next((p for p in (data_dir, *data_dir.parents) if p.exists()), Path("/"))
    free = shutil.disk_usage(probe).free / 1e9
    results.append((free >= MIN_FREE_GB, f"{free:.1f} GB free on the disk of {probe}"
                    + ("" if free >= MIN_FREE_GB else f": need about {MIN_FREE_GB:.0f} GB")))
    if os.environ.get("MEMVAULT_DATABASE_URL"):
        results.append((True, "database: MEMVAULT_DATABASE_URL (your server; `memvault db up` checks it)"))
    elif (bindir := cluster.find_host_postgres()) is not None:
        results.append((True, f"database: PostgreSQL 17 with pgvector and AGE in {bindir}"))
    elif not sys.platform.startswith("linux"):
        results.append((False, "database: no PostgreSQL 17 with pgvector and AGE here, and the embedded one is built "
                        "on Linux only: set MEMVAULT_DATABASE_URL (README: macOS, docker/)"))
    elif os.geteuid() == 0:
        has = shutil.which("debootstrap") or shutil.which("apt-get")
        results.append((bool(has), "database: embedded, built as root with debootstrap" if has else
                        "database: no debootstrap and no apt-get to install it: set MEMVAULT_DATABASE_URL"))
    else:
        problems = rootfs.unpacked_problems()
        results.append((not problems, "database: embedded, built without root (unpacked, user namespace)" if not
                        problems else "database: cannot be built without root here: " + "; ".join(problems)
                        + ". Set MEMVAULT_DATABASE_URL instead (README: an external PostgreSQL)"))
    return results


def main() -> int:
    results = checks()
    for ok, line in results:
        print(f"make: preflight {'ok  ' if ok else 'FAIL'} {line}", flush=True)
    if all(ok for ok, _ in results):
        return 0
    print("make: stopping before the install: fix what FAIL says, then run the same command again", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
