"""The checks `make` runs before the long install work with the bare interpreter (no site-packages: nothing is
installed yet) and say what is missing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _preflight(env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    code = f"import sys, runpy; sys.path.insert(0, {str(REPO)!r}); runpy.run_module('app.db.preflight', run_name='__main__')"
    return subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, timeout=60,
                          env=env, check=False)


def test_preflight_runs_on_the_standard_library_alone() -> None:
    done = _preflight()
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert all(line.startswith("make: preflight ok") for line in lines) and len(lines) >= 4, lines
    assert any("database:" in line for line in lines)


def test_an_external_server_skips_the_embedded_checks(tmp_path) -> None:
    done = _preflight({"PATH": "/usr/bin:/bin", "MEMVAULT_DATABASE_URL": "postgresql://u@db.example/mv",
                       "MEMVAULT_DATA_DIR": str(tmp_path)})
    assert done.returncode == 0 and "database: MEMVAULT_DATABASE_URL" in done.stdout, done.stdout


def test_a_missing_prerequisite_stops_with_what_to_do(monkeypatch) -> None:
    from app.db import preflight, rootfs

    monkeypatch.setattr(preflight.os, "geteuid", lambda: 1000)
    monkeypatch.setattr(preflight.sys, "platform", "linux")
    monkeypatch.delenv("MEMVAULT_DATABASE_URL", raising=False)
    monkeypatch.setattr(rootfs, "unpacked_problems", lambda: ["unshare is not installed (Debian/Ubuntu package "
                                                              "util-linux)"])
    from app.db import cluster

    monkeypatch.setattr(cluster, "find_host_postgres", lambda: None)
    failed = [line for ok, line in preflight.checks() if not ok]
    assert failed and "util-linux" in failed[0] and "MEMVAULT_DATABASE_URL" in failed[0]
