"""Erasure down to the files: a purge deletes the rows, but their bytes stay in table and index pages and in the
WAL; `memvault purge --physical` rewrites the tables, checkpoints and switches the WAL past them, after which no
file of the cluster's data directory holds the purged text. On a cluster of the test's own (tests/own_cluster.py),
whose files the test reads."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from litestar.testing import AsyncTestClient

from app.api.app import create_app
from app.services import Services
from tests.conftest import service_login
from tests.integration.test_erasure import plant
from tests.own_cluster import OwnCluster, own_cluster


@pytest.fixture
def cluster(test_settings, tmp_path) -> OwnCluster:
    with own_cluster(test_settings, tmp_path) as c:
        yield c


def files_holding(pgdata: Path, needles: list[bytes]) -> list[str]:
    """The files under ``pgdata`` whose bytes contain one of ``needles`` (relative paths)."""
    found = []
    for path in sorted(p for p in pgdata.rglob("*") if p.is_file()):
        data = path.read_bytes()
        if any(n in data for n in needles):
            found.append(str(path.relative_to(pgdata)))
    return found


def checkpoint(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CHECKPOINT")


@pytest.mark.timeout(300)
async def test_purge_physical_leaves_no_byte_of_the_purged_text_on_disk(cluster: OwnCluster, test_settings,
                                                                         _admin_key_material) -> None:
    gone, erased, kept = "zqvorplexium", "ywharnetrix", "Bruno keeps bees on the roof of the bakery."
    needles = [m[:8].encode() for m in (gone, erased)] + [m[:8].capitalize().encode() for m in (gone, erased)]
    owner = await Services.start(test_settings, url=cluster.url)
    api = await Services.start(test_settings.model_copy(update={"pool_min_size": 3}),
                               url=service_login(cluster.url, test_settings), ddl_url=cluster.url)
    key_id, key, key_hash = _admin_key_material
    await owner.db.fetchone("SELECT * FROM memvault.api_key_create_v1(%s, %s, 'admin', NULL, 'tests')",
                            (key_id, key_hash))
    try:
        async with AsyncTestClient(app=create_app(api.settings, services=api)) as client:
            client.headers["Authorization"] = f"Bearer {key}"
            for name in ("gone", "kept"):
                assert (await client.post("/v1/vaults", json={"name": name})).status_code == 201
            await plant(client, owner, "gone", gone)
            r = await client.post("/v1/vaults/kept/memories", json={"items": [
                {"content": kept}, {"content": f"The courier {erased} left the parcel at the harbour gate."}]})
            assert r.status_code == 200, r.text
            one = r.json()["results"][1]["block_id"]
            checkpoint(cluster.url)
            before = files_holding(cluster.pgdata, needles)
            assert any(f.startswith("base/") for f in before) and any(f.startswith("pg_wal/") for f in before)

            # The logical purges: one memory through the API, the whole vault by the command line, physically.
            r = await client.delete(f"/v1/vaults/kept/memories/{one}", params={"purge": "true"})
            assert r.status_code in (200, 204), r.text
            done = subprocess.run([sys.executable, "-m", "app.cli", "purge", "--vault", "gone", "--physical"],
                                  env=cluster.env, capture_output=True, text=True, timeout=240, check=False)
            assert done.returncode == 0, done.stderr[-3000:]
            assert "purged vault gone" in done.stdout and "physical erasure: rewrote" in done.stdout, done.stdout
            assert "not done" not in done.stdout, done.stdout  # the embedded cluster's owner is a superuser

            assert files_holding(cluster.pgdata, needles) == [], done.stdout
            r = await client.post("/v1/vaults/kept/recall", json={"query": "Who keeps bees?"})  # the rest serves
            assert r.status_code == 200 and "bees" in r.text
        with psycopg.connect(cluster.url) as conn:
            assert conn.execute("SHOW wal_recycle").fetchone()[0] == "on"  # reset after the erasure
    finally:
        await api.close()
        await owner.close()
