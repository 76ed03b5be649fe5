"""`memvault serve --workers 2`, for real: two API processes on one port and the job worker in a process of its
own, every one logged in as memvault_service, all answering, all gone after SIGTERM."""

from __future__ import annotations

import subprocess
import time

import httpx
import psycopg
import pytest

from app.bench.runtime import serve_process
from tests.conftest import cli_env


@pytest.mark.timeout(180)
def test_serve_with_two_api_processes_and_a_job_worker(db_url: str, _admin_key_material, tmp_path) -> None:
    key_id, admin_key, key_hash = _admin_key_material
    with psycopg.connect(db_url, autocommit=True) as conn:  # closed before: the serve's logins are all left
        conn.execute("SELECT * FROM memvault.api_key_create_v1(%s, %s, 'admin', NULL, 'multi')", (key_id, key_hash))
    with serve_process(cli_env(db_url), tmp_path / "serve.log", "--workers", "2") as (server, base):
        deadline = time.monotonic() + 150
        with httpx.Client(base_url=base, timeout=30, headers={"Authorization": f"Bearer {admin_key}"}) as http:
            while True:
                assert server.poll() is None, (tmp_path / "serve.log").read_text()[-3000:]
                assert time.monotonic() < deadline, "serve --workers 2 did not come up"
                try:
                    if http.get("/health").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                time.sleep(0.3)
            assert http.post("/v1/vaults", json={"name": "multi"}).status_code == 201
            for i in range(6):  # spread over both processes by the kernel; every one must answer
                r = http.post("/v1/vaults/multi/memories", json={"content": f"Ana moved to city number {i}."})
                assert r.status_code == 200, r.text
                assert http.post("/v1/vaults/multi/recall", json={"query": "Where did Ana move?"}).status_code == 200
            with psycopg.connect(db_url) as conn:
                logins = conn.execute(
                    "SELECT usename, count(DISTINCT pid) FROM pg_stat_activity WHERE datname = current_database() "
                    "AND pid <> pg_backend_pid() GROUP BY 1").fetchall()
        assert dict(logins).keys() == {"memvault_service"}, logins  # the API processes and the job worker alike
        procs = subprocess.run(["ps", "-o", "pid=", "--ppid", str(server.pid)], capture_output=True, text=True,
                               check=False).stdout.split()
        assert len(procs) >= 2  # the job worker and uvicorn's two API processes (under the supervisor)
