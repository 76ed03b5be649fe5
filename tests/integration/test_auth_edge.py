"""Least privilege at the edge: a 401 never echoes what was sent and says the same for every failed key (no
oracle for which key ids exist); failed keys are rate-limited per key id and per client address (429 +
Retry-After), by the limiter the composition root owns; dumps and exports are written 0600."""

from __future__ import annotations

import asyncio
import json
import os
import stat
from pathlib import Path

import pytest


@pytest.fixture
async def bare(api_services):
    """The API as served, called with no key of its own."""
    from litestar.testing import AsyncTestClient

    from app.api.app import create_app

    async with AsyncTestClient(app=create_app(api_services.settings, services=api_services)) as c:
        yield c


def _secret(key: str) -> str:
    return key.split("_", 2)[2]  # the secret may itself hold "_" (token_urlsafe)


async def test_a_401_never_echoes_the_key_and_is_the_same_for_every_failure(bare, admin_key, client) -> None:
    key_id = admin_key.split("_")[1]
    created = (await client.post("/v1/keys", json={"scope": "read", "name": "to revoke"})).json()
    assert (await client.delete(f"/v1/keys/{created['id']}")).status_code == 200
    wrong = f"mvk_{key_id}_{'A' * 43}"
    unknown = f"mvk_000000000000_{_secret(admin_key)}"
    attempts = {
        "tab": {"Authorization": f"Bearer\t{admin_key}x"},
        "no scheme": {"Authorization": admin_key},
        "unknown scheme": {"Authorization": f"Token {admin_key}"},
        "bad basic": {"Authorization": f"Basic {admin_key}"},
        "malformed": {"Authorization": "Bearer mvk_short"},
        "wrong secret": {"Authorization": f"Bearer {wrong}"},
        "unknown id": {"Authorization": f"Bearer {unknown}"},
        "revoked": {"Authorization": f"Bearer {created['key']}"},
        "x-api-key wrong": {"X-API-Key": wrong},
    }
    bodies = {}
    for name, headers in attempts.items():
        r = await bare.get("/v1/vaults", headers=headers)
        assert r.status_code == 401, (name, r.text)
        assert r.headers["www-authenticate"].startswith("Bearer")
        text = r.text
        for secret in (admin_key, _secret(admin_key), _secret(created["key"]), "A" * 43, key_id, created["id"],
                       "000000000000"):
            assert secret not in text, (name, text)
        body = r.json()
        bodies[name] = (body["error"], body["detail"], body["hint"])
    assert len(set(bodies.values())) == 1, bodies  # one message: no oracle
    # a key given with a tab between the scheme and itself is read (whitespace is whitespace)
    assert (await bare.get("/v1/vaults", headers={"Authorization": f"Bearer\t{admin_key}"})).status_code == 200


async def test_failed_keys_are_limited_per_key_id_then_per_address(bare, api_services, admin_key) -> None:
    from app.auth_limit import FailedAuthLimiter

    api_services.auth_attempts = FailedAuthLimiter(per_key=3, per_address=5, window_s=60)
    key_id = admin_key.split("_")[1]
    wrong = {"Authorization": f"Bearer mvk_{key_id}_{'B' * 43}"}
    statuses = [(await bare.get("/v1/vaults", headers=wrong)).status_code for _ in range(5)]
    assert statuses == [401, 401, 401, 429, 429]
    r = await bare.get("/v1/vaults", headers=wrong)
    assert r.status_code == 429 and 1 <= int(r.headers["retry-after"]) <= 60
    assert set(r.json()) == {"error", "detail", "where", "hint", "fields"} and r.json()["error"] == "TooManyRequests"
    # the key itself is refused while its id is blocked (a 200 here would confirm the right secret)
    r = await bare.get("/v1/vaults", headers={"Authorization": f"Bearer {admin_key}"})
    assert r.status_code == 429
    # other key ids from the same address: two more failures fill the address's five, then it is blocked
    others = [(await bare.get("/v1/vaults", headers={"Authorization": f"Bearer mvk_{n}00000000000_{'C' * 43}"}))
              .status_code for n in range(3)]
    assert others == [401, 401, 429]
    # a request with no key at all guesses nothing: it is not counted, but a blocked address is refused
    assert (await bare.get("/v1/vaults")).status_code == 429


async def test_the_inspector_sign_in_counts_failed_keys_too(bare, api_services, admin_key) -> None:
    from app.auth_limit import FailedAuthLimiter

    api_services.auth_attempts = FailedAuthLimiter(per_key=2, per_address=10, window_s=60)
    key_id = admin_key.split("_")[1]
    form = {"key": f"mvk_{key_id}_{'D' * 43}", "next": "/inspect"}
    headers = {"origin": "http://testserver.local", "host": "testserver.local"}
    codes = [(await bare.post("/inspect/login", data=form, headers=headers)).status_code for _ in range(3)]
    assert codes == [401, 401, 429]


def test_the_limiter_forgets_failures_after_the_window_and_stays_bounded() -> None:
    from app.auth_limit import FailedAuthLimiter

    now = [1000.0]
    limiter = FailedAuthLimiter(per_key=2, per_address=100, window_s=60, max_tracked=4, clock=lambda: now[0])
    limiter.failed("k", "a")
    limiter.failed("k", "a")
    with pytest.raises(Exception) as refused:
        limiter.check("k", "a")
    assert refused.value.status == 429 and refused.value.headers["Retry-After"] == "60"
    now[0] += 30
    with pytest.raises(Exception) as refused:
        limiter.check("k", "a")
    assert refused.value.headers["Retry-After"] == "30"
    now[0] += 31
    limiter.check("k", "a")  # the window has passed
    for i in range(10):
        limiter.failed(f"k{i}", f"a{i}")
    assert len(limiter._failures) <= 4


def test_db_dump_is_written_0600(tmp_path: Path, db_url: str, test_settings) -> None:
    """What `memvault db dump -o F` runs (with the server's own pg_dump), over a new file and an old one."""
    from app.db.backup import dump

    os.umask(0o022)
    existing = tmp_path / "old.dump"
    existing.write_bytes(b"old")
    existing.chmod(0o644)
    for out in (tmp_path / "new.dump", existing):
        assert dump(test_settings, db_url, out) > 3
        assert stat.S_IMODE(out.stat().st_mode) == 0o600, oct(out.stat().st_mode)


def test_export_is_written_0600(tmp_path: Path, memvault_env) -> None:
    from app.cli import main
    from app.services import Services
    from app.settings import get_settings
    from app.vaults import create_vault

    async def make() -> None:
        services = await Services.start(get_settings())
        try:
            await create_vault(services.db, "exported")
        finally:
            await services.close()

    asyncio.run(make())
    os.umask(0o022)
    export = tmp_path / "v.jsonl"
    assert main(["export", "--vault", "exported", "-o", str(export)]) == 0
    assert stat.S_IMODE(export.stat().st_mode) == 0o600
    assert json.loads(export.read_text().splitlines()[0])
