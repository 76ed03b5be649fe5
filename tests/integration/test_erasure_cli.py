"""The command line of erasure and export: ``memvault export`` writes the same JSONL as the API, ``memvault purge``
erases a memory, then the vault (a real process on the test database)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from app.portability import is_memvault_export

REPO = Path(__file__).resolve().parents[2]


def memvault(db_url: str, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    env.update(PYTHONPATH=str(REPO), MEMVAULT_DATABASE_URL=db_url)
    return subprocess.run([sys.executable, "-m", "app.cli", *args], env=env, cwd=REPO, capture_output=True,
                          text=True, timeout=120)


async def test_export_and_purge_from_the_command_line(client, services, db_url: str, tmp_path: Path) -> None:
    assert (await client.post("/v1/vaults", json={"name": "cli"})).status_code == 201
    r = await client.post("/v1/vaults/cli/memories", json={"items": [
        {"content": "Quillon the cat sleeps on the piano."}, {"content": "The boiler was serviced in March."}]})
    first = r.json()["results"][0]["block_id"]
    out = tmp_path / "cli.jsonl"
    done = memvault(db_url, "export", "--vault", "cli", "-o", str(out))
    assert done.returncode == 0, done.stderr
    lines = out.read_text().splitlines()
    assert is_memvault_export(lines[0]) and sum('"type":"block"' in line for line in lines) == 2
    done = memvault(db_url, "purge", "--vault", "cli", "--memory", str(first))
    assert done.returncode == 0 and "purged memory" in done.stdout, done.stderr
    left = await services.db.fetchall("SELECT * FROM memvault.erasure_residue_v1('Quillon')")
    assert left == []
    done = memvault(db_url, "purge", "--vault", "cli")
    assert done.returncode == 0 and "purged vault cli" in done.stdout, done.stderr
    assert (await client.get("/v1/vaults/cli")).status_code == 404
