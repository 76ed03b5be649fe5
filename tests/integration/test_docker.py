"""docker/ for real: the two images built, the service with its worker on its database, a key, a write, a recall.
It needs a Docker engine; where none runs (the development machines: only the client is installed), it is skipped
and says so. tests/integration/test_provision.py checks the files against the settings and the package list
everywhere."""

from __future__ import annotations

import shutil
import subprocess
import time
import uuid
from pathlib import Path

import httpx
import pytest

COMPOSE = Path(__file__).resolve().parents[2] / "docker" / "compose.yaml"


def _engine() -> str | None:
    """None when an engine answers; else why not."""
    if shutil.which("docker") is None:
        return "docker is not installed"
    info = subprocess.run(["docker", "info", "--format", "{{.ServerVersion}}"], capture_output=True, text=True,
                          timeout=30, check=False)
    if info.returncode != 0:
        said = (info.stderr or info.stdout).strip().splitlines()
        return f"no Docker engine runs here (docker info: {said[-1] if said else info.returncode})"
    return None


@pytest.mark.timeout(1800)
def test_compose_builds_and_serves_with_its_worker() -> None:
    if (why := _engine()) is not None:
        pytest.skip(f"cannot build or run the images: {why}")
    project = f"memvault-test-{uuid.uuid4().hex[:6]}"
    compose = ["docker", "compose", "-p", project, "-f", str(COMPOSE)]
    try:
        subprocess.run([*compose, "up", "-d", "--build"], check=True, timeout=1500)
        deadline = time.monotonic() + 300
        with httpx.Client(base_url="http://127.0.0.1:8420", timeout=30) as http:
            while True:
                assert time.monotonic() < deadline, subprocess.run([*compose, "logs"], capture_output=True,
                                                                   text=True).stdout[-3000:]
                try:
                    health = http.get("/health")
                    if health.status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                time.sleep(2)
            assert health.json().get("worker", {}).get("alive") is not False, health.text  # its job worker
            key = subprocess.run([*compose, "exec", "-T", "app", "cat", "/var/lib/memvault/api_key"],
                                 capture_output=True, text=True, check=True).stdout.strip()
            http.headers["Authorization"] = f"Bearer {key}"
            assert http.post("/v1/vaults", json={"name": "alice"}).status_code == 201
            assert http.post("/v1/vaults/alice/memories", json={"content": "I moved to Tainan."}).status_code == 200
            recall = http.post("/v1/vaults/alice/recall", json={"query": "where do I live?"})
            assert recall.status_code == 200 and "Tainan" in recall.text
    finally:
        subprocess.run([*compose, "down", "-v"], check=False, timeout=300)
