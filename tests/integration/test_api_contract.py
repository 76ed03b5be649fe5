"""The OpenAPI document is the contract: schemathesis, as its own command line runs it, with every check
(``--checks all``) and every phase (examples, coverage, fuzzing, stateful) over every route, keys and import
included, against the API served for real. 0 server errors, 0 schema, status, header or content-type mismatches.

Requests for a vault are pointed at the vault ``fuzz`` the test creates, and what a generated request revokes is
put back after each call: the admin key the run uses (``tests/fakes/schemathesis_hooks.py``). What the document
cannot say (an opaque cursor, an export's format, a time zone) is declared in ``tests/fakes/schemathesis.toml``.
Strings are generated without NUL: PostgreSQL text cannot hold one, and every route refuses it with a 422 that
says so (tests/integration/test_bad_input.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import cli_env
from tests.fakes.live_server import live_api

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "tests/fakes/schemathesis.toml"
MAX_EXAMPLES = 5  # per operation, in the fuzzing phase; the coverage phase (most of the run) is not bounded by it
OPTIONS = ["--checks", "all", "--phases", "examples,coverage,fuzzing,stateful", "--max-examples", str(MAX_EXAMPLES),
           "--workers", "1", "--seed", "1", "--generation-deterministic", "--no-shrink", "--suppress-health-check",
           "all", "--generation-allow-x00", "false", "--request-timeout", "30", "--output-truncate", "true"]


@pytest.mark.timeout(420)
def test_openapi_contract_holds_under_every_schemathesis_check(db_url: str, service_db_url: str, test_settings,
                                                                  _admin_key_material, tmp_path) -> None:
    import psycopg

    key_id, key, key_hash = _admin_key_material
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("SELECT * FROM memvault.api_key_create_v1(%s, %s, 'admin', NULL, 'schemathesis')",
                     (key_id, key_hash))
    auth = {"Authorization": f"Bearer {key}"}
    report = tmp_path / "report.json"
    # ignored_auth sends each operation a wrong key once (~50 from this address): the failed-key limit is
    # tests/integration/test_auth_edge.py's subject, not this run's
    settings = test_settings.model_copy(update={"auth_failures_per_address": 10_000})
    # the service as it runs: its job worker beside the API, so /health answers 200 (without one it is the
    # documented 503 naming the worker) and the jobs the writes defer run
    worker = subprocess.Popen([sys.executable, "-m", "app.cli", "worker"], env=cli_env(db_url),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        _contract_run(settings, service_db_url, db_url, key_id, key, auth, report, tmp_path, worker)
    finally:
        worker.terminate()
        worker.wait(60)
    _check(report, tmp_path)


def _contract_run(settings, service_db_url, db_url, key_id, key, auth, report, tmp_path, worker) -> None:
    import httpx

    with live_api(settings, service_db_url) as base:
        deadline = time.monotonic() + 120
        while httpx.get(f"{base}/health").status_code != 200:  # the worker's first heartbeat
            assert worker.poll() is None and time.monotonic() < deadline, httpx.get(f"{base}/health").text
            time.sleep(0.5)
        assert httpx.post(f"{base}/v1/vaults", json={"name": "fuzz"}, headers=auth).status_code == 201
        env = {**os.environ, "SCHEMATHESIS_HOOKS": "tests.fakes.schemathesis_hooks", "PYTHONPATH": str(ROOT),
               "MEMVAULT_TEST_OWNER_URL": db_url, "MEMVAULT_TEST_KEY_ID": key_id, "MEMVAULT_TEST_KEY": key,
               "MEMVAULT_TEST_BASE_URL": base, "NO_COLOR": "1"}
        run = subprocess.run([sys.executable, "-m", "schemathesis.cli", "--config-file", str(CONFIG), "run",
                              f"{base}/docs/openapi.json", *OPTIONS, "-H", f"Authorization: Bearer {key}",
                              "--report", "json", "--report-json-path", str(report)],
                             cwd=tmp_path, env=env, capture_output=True, text=True, timeout=400)
        (tmp_path / "schemathesis.txt").write_text(run.stdout + run.stderr)


def _check(report, tmp_path) -> None:
    assert report.exists(), (tmp_path / "schemathesis.txt").read_text()[-8_000:]
    result = json.loads(report.read_text())
    cases = result["test_cases"]
    failures = result.get("failures") or {}
    print(f"schemathesis: {cases} over {result['operations']}; failures: {failures}")
    assert cases["with_failures"] == 0, f"{tmp_path / 'schemathesis.txt'}:\n" + \
        (tmp_path / "schemathesis.txt").read_text()[-12_000:]
    assert not failures and cases["with_failures"] == 0 and cases["errored"] == 0
    operations = result["operations"]
    assert operations["tested"] == operations["total"] >= 40 and operations["errored"] == 0, operations
    assert cases["generated"] >= 1_000, cases  # every phase ran, not a handful of requests
