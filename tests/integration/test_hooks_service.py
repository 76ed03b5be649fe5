"""``memvault hook`` as a thin client: with a service running it goes over HTTP (the hook's process loads no
model: here its own embedder setting could not even load), with none it does the work itself; neither prints a
traceback."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import cli_env
from tests.fakes.live_server import live_api


def hook(db_url: str, event: str, payload: dict, key: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app.cli", "hook", event, "--vault", "coding"],
                          input=json.dumps(payload), capture_output=True, text=True, timeout=120,
                          env={**cli_env(db_url), "MEMVAULT_API_KEY": key, **env})


async def test_hooks_go_over_http_to_a_running_service(test_settings, db_url, service_db_url, admin_key,
                                                       services) -> None:
    from app.client import AsyncMemVault
    from app.vaults import get_vault

    with live_api(test_settings, service_db_url) as base:
        async with AsyncMemVault(base, admin_key) as mv:
            await mv.create_vault("coding")
            await mv.remember("coding", "billing-api: the staging database runs on port 6543.")
        # an embedder this process cannot build (no URL): any model load here would fail the hook
        offline = {"MEMVAULT_API_URL": base, "MEMVAULT_EMBEDDER": "openai", "MEMVAULT_EMBEDDER_URL": ""}
        start = hook(db_url, "session-start", {"session_id": "cc-1", "source": "startup", "cwd": "/w/billing-api"},
                     admin_key, **offline)
        assert start.returncode == 0 and start.stderr == "", start.stderr
        assert "6543" in json.loads(start.stdout)["hookSpecificOutput"]["additionalContext"]
        prompt = hook(db_url, "user-prompt-submit", {"session_id": "cc-1", "prompt": "Which port has staging?"},
                      admin_key, **offline)
        assert prompt.returncode == 0 and prompt.stderr == "", prompt.stderr
        context = json.loads(prompt.stdout)["hookSpecificOutput"]["additionalContext"]
        assert context.startswith("Relevant long-term memories (memvault, vault coding)") and "6543" in context
        stop = hook(db_url, "stop", {"session_id": "cc-1", "last_assistant_message": "Staging uses port 6543."},
                    admin_key, **offline)
        assert stop.returncode == 0 and stop.stdout == "" and stop.stderr == ""
        end = hook(db_url, "session-end", {"session_id": "cc-1"}, admin_key, **offline)
        assert end.returncode == 0 and end.stderr == ""
        again = hook(db_url, "session-end", {"session_id": "cc-1"}, admin_key, **offline)
        assert again.returncode == 0 and again.stderr == ""  # already closed: nothing to do, no error
    vault = await get_vault(services.db, "coding")
    rows = await services.db.fetchall("SELECT role, content FROM memvault.turn WHERE vault_id = %s ORDER BY id",
                                      (vault.id,), vault_id=vault.id)
    assert [(r["role"], r["content"]) for r in rows] == [("user", "Which port has staging?"),
                                                        ("assistant", "Staging uses port 6543.")]
    closed = await services.db.fetchone("SELECT closed_at FROM memvault.session WHERE vault_id = %s AND id = "
                                        "'cc-1'", (vault.id,), vault_id=vault.id)
    assert closed["closed_at"] is not None


def test_a_missing_vault_is_created_over_http_as_in_process(test_settings, db_url, service_db_url,
                                                            admin_key) -> None:
    with live_api(test_settings, service_db_url) as base:
        r = hook(db_url, "user-prompt-submit", {"session_id": "cc-2", "prompt": "We use Postgres 17."}, admin_key,
                 MEMVAULT_API_URL=base)
        assert r.returncode == 0 and r.stdout == "" and r.stderr == "", r.stderr
        from app.client import MemVault

        with MemVault(base, admin_key) as mv:
            assert [t.content for t in mv.turns("coding", "cc-2").items] == ["We use Postgres 17."]


def test_without_a_service_the_hook_works_in_process_without_a_traceback(db_url, admin_key) -> None:
    start = hook(db_url, "session-start", {"session_id": "cc-3", "source": "startup", "cwd": "/w/x"}, admin_key)
    assert start.returncode == 0 and "Traceback" not in start.stderr and start.stdout == "", start.stderr
    prompt = hook(db_url, "user-prompt-submit", {"session_id": "cc-3", "prompt": "I like tabs."}, admin_key)
    assert prompt.returncode == 0 and "Traceback" not in prompt.stderr, prompt.stderr
    wrong = hook(db_url, "user-prompt-submit", {"session_id": "cc-3", "prompt": "x"}, "mvk_bad_aaaaaaaaaaaaaaaaaa")
    assert wrong.returncode == 1 and wrong.stderr.startswith("memvault: ") and "Traceback" not in wrong.stderr


def test_bench_hooks_measures_against_a_running_service(test_settings, db_url, service_db_url, admin_key) -> None:
    with live_api(test_settings, service_db_url) as base:
        r = subprocess.run([sys.executable, "-m", "app.cli", "bench", "hooks", "-n", "2", "--json"],
                           capture_output=True, text=True, timeout=300,
                           env={**cli_env(db_url), "MEMVAULT_API_KEY": admin_key, "MEMVAULT_API_URL": base})
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["n"] == 2 and 0 < out["hook_wall_ms"]["p50"] <= out["hook_wall_ms"]["max"]
    assert out["hook_cpu_ms"]["p50"] > 0 and out["mcp_initialize_ms"]["p95"] > 0
