"""The Claude Code hook's thin entry (app/interfaces/hook_client.py): it imports nothing heavy, finds the key and
the service as app.settings does, and keeps its writes' WAL position; plus app.lsn's HighestLSN."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from app.interfaces.hook_client import agent_settings, run_sync, service_url
from app.lsn import LSN_HEADER, HighestLSN

# What the hook used to import (~360 ms of a prompt's 430 ms) and must not again: any of these in the thin path
# is a regression of the hook latency goal.
HEAVY = ("httpx", "pydantic", "pydantic_settings", "asyncio", "psycopg", "numpy", "app.settings", "app.client",
         "app.services", "litestar", "dataclasses", "inspect")


def _imported(code: str, stdin: str = "") -> set[str]:
    out = subprocess.run([sys.executable, "-c", code], input=stdin, capture_output=True, text=True, timeout=60,
                         check=False, env={"PATH": "/usr/bin:/bin", "MEMVAULT_API_KEY": "mvk_x_y",
                                           "MEMVAULT_API_URL": "http://127.0.0.1:9"})
    assert out.returncode == 0, out.stderr
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_the_hook_command_imports_only_the_standard_library() -> None:
    """``memvault hook`` as Claude Code runs it (app.cli's main), for an event it has nothing to send for."""
    loaded = _imported("import json, sys\nfrom app.cli import main\nsys.argv = ['memvault', 'hook', "
                       "'user-prompt-submit', '--vault', 'v']\nrc = main()\nassert rc == 0, rc\n"
                       "print(json.dumps(sorted(sys.modules)))", stdin=json.dumps({"session_id": "s"}))
    assert "app.interfaces.hook_client" in loaded
    assert not {m for m in loaded if m.split(".")[0] in HEAVY or m in HEAVY}


@pytest.mark.parametrize("env", [
    {},
    {"MEMVAULT_API_KEY": "mvk_a_b", "MEMVAULT_PORT": "9999"},
    {"MEMVAULT_HOST": "0.0.0.0", "MEMVAULT_PORT": "8500"},
    {"MEMVAULT_HOST": "10.1.2.3"},
    {"memvault_api_url": "http://svc:1234", "MEMVAULT_API_KEY": "mvk_c_d"},  # any case, as pydantic-settings
])
def test_the_key_and_the_service_are_found_as_app_settings_finds_them(monkeypatch, env: dict[str, str]) -> None:
    from app.settings import Settings

    for var in ("MEMVAULT_API_KEY", "MEMVAULT_API_URL", "MEMVAULT_HOST", "MEMVAULT_PORT"):
        monkeypatch.delenv(var, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    settings = Settings()
    mine = agent_settings()
    assert mine["api_key"] == (settings.api_key.get_secret_value() if settings.api_key else None)
    host = "127.0.0.1" if settings.host in ("0.0.0.0", "::", "") else settings.host
    assert service_url(None, mine) == (settings.api_url or f"http://{host}:{settings.port}")
    assert service_url("http://given:1", mine) == "http://given:1"


def test_run_sync_refuses_a_coroutine_that_suspends() -> None:
    async def fine() -> int:
        return 7

    class Suspends:
        def __await__(self):
            yield None

    async def suspends() -> None:
        await Suspends()

    assert run_sync(fine()) == 7
    with pytest.raises(RuntimeError, match="suspended"):
        run_sync(suspends())


def test_highest_lsn_keeps_the_highest_position_and_ignores_what_is_not_one() -> None:
    lsn = HighestLSN()
    assert lsn.headers() == {}
    for seen in ("0/3000148", None, "", "0/2000000", "junk", "1/0", "0/FFFFFFFF"):
        lsn.saw(seen)
    assert lsn.headers() == {LSN_HEADER: "1/0"} and lsn.value == 1 << 32
