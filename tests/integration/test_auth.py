"""API keys: 401 without a valid key, 403 for a valid key that may not, the keys API and CLI, the verification
cache, serve's refusal to listen beyond loopback without keys, and MCP and hooks acting with a key."""

from __future__ import annotations

import asyncio
import os
import stat

import pytest
from litestar.testing import AsyncTestClient

from app.api.app import create_app
from app.auth import authenticate
from app.errors import ConfigError, Forbidden, Unauthorized
from app.keys import create_key, revoke_key
from app.vaults import create_vault


@pytest.fixture
async def anon(services):
    """The API without any key (the ``client`` fixture sends an admin key)."""
    async with AsyncTestClient(app=create_app(services.settings, services=services)) as c:
        yield c


def _bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def test_every_route_needs_a_key_but_health_and_docs(anon, services, vault) -> None:
    r = await anon.get("/v1/vaults")
    assert r.status_code == 401
    assert r.headers["www-authenticate"].startswith("Bearer")
    body = r.json()
    assert body["error"] == "Unauthorized" and "API key is required" in body["detail"]
    assert "memvault key create" in body["hint"]
    # one answer for every key that fails (malformed, unknown, wrong): no oracle of which key ids exist
    for bad in ("nonsense", "mvk_abcdef0123_" + "x" * 43):
        r = await anon.get("/v1/vaults", headers=_bearer(bad))
        assert r.status_code == 401 and r.json()["detail"] == "the API key is not valid"
    key, info = await create_key(services.db, scope="read")
    wrong = key[:-1] + ("a" if key[-1] != "a" else "b")
    r = await anon.get("/v1/vaults", headers=_bearer(wrong))
    assert r.status_code == 401 and r.json()["detail"] == "the API key is not valid"
    assert (await anon.get("/v1/vaults", headers=_bearer(key))).status_code == 200
    assert (await anon.get("/v1/vaults", headers={"X-API-Key": key})).status_code == 200
    import base64
    basic = base64.b64encode(f"me:{key}".encode()).decode()
    assert (await anon.get("/v1/vaults", headers={"Authorization": f"Basic {basic}"})).status_code == 200
    assert (await anon.get("/health")).status_code in (200, 503)  # public: no key asked (503: no worker here)
    assert (await anon.get("/docs/openapi.json")).status_code == 200


async def test_scope_and_vault_decide_403(anon, services, vault) -> None:
    other = await create_vault(services.db, "other-vault")
    read, _ = await create_key(services.db, scope="read", vault=vault.name)
    write, _ = await create_key(services.db, scope="write", vault=vault.name)
    base = f"/v1/vaults/{vault.name}"
    r = await anon.post(f"{base}/memories", json={"content": "The deploy window is Tuesday."}, headers=_bearer(read))
    assert r.status_code == 403 and "scope 'read'" in r.json()["detail"] and "hint" in r.json()
    r = await anon.post(f"{base}/recall", json={"query": "deploy window"}, headers=_bearer(read))
    assert r.status_code == 200  # recall is a POST that reads
    r = await anon.post(f"{base}/memories", json={"content": "The deploy window is Tuesday."}, headers=_bearer(write))
    assert r.status_code == 200
    r = await anon.get(f"/v1/vaults/{other.name}", headers=_bearer(write))
    assert r.status_code == 403 and "bound to vault 'test-vault'" in r.json()["detail"]
    listed = await anon.get("/v1/vaults", headers=_bearer(read))
    assert [v["name"] for v in listed.json()["items"]] == [vault.name]
    page = await anon.get("/inspect", headers=_bearer(read))  # the inspector lists what the key may see
    assert page.status_code == 200 and f">{vault.name}<" in page.text and other.name not in page.text
    r = await anon.post("/v1/vaults", json={"name": "mine"}, headers=_bearer(write))
    assert r.status_code == 403 and "across vaults" in r.json()["detail"]
    everywhere, _ = await create_key(services.db, scope="write")
    assert (await anon.post("/v1/vaults", json={"name": "mine"}, headers=_bearer(everywhere))).status_code == 201
    assert (await anon.delete("/v1/vaults/mine", headers=_bearer(everywhere))).status_code == 403  # admin only


async def test_keys_api_creates_lists_and_revokes(anon, client, services, vault) -> None:
    r = await client.post("/v1/keys", json={"scope": "write", "vault": vault.name, "name": "agent"})
    assert r.status_code == 201, r.text
    made = r.json()
    assert made["key"].startswith(f"mvk_{made['id']}_") and made["vault"] == vault.name
    assert (await anon.get(f"/v1/vaults/{vault.name}", headers=_bearer(made["key"]))).status_code == 200
    listed = (await client.get("/v1/keys")).json()["items"]
    assert made["id"] in [k["id"] for k in listed]
    assert all("key" not in k and "key_hash" not in k for k in listed)
    first = (await client.get("/v1/keys", params={"limit": 1})).json()
    second = (await client.get("/v1/keys", params={"limit": 1, "cursor": first["next_cursor"]})).json()
    assert [k["id"] for k in first["items"] + second["items"]] == [k["id"] for k in listed][:2]
    # a vault-bound key may not manage keys, nor a write key
    assert (await anon.get("/v1/keys", headers=_bearer(made["key"]))).status_code == 403
    assert (await client.post("/v1/keys", json={"scope": "root"})).status_code == 422
    r = await client.delete(f"/v1/keys/{made['id']}")
    assert r.status_code == 200 and r.json()["revoked_at"] is not None
    r = await anon.get(f"/v1/vaults/{vault.name}", headers=_bearer(made["key"]))
    assert r.status_code == 401 and r.json()["detail"] == "the API key is not valid"
    assert (await client.delete("/v1/keys/nosuchkey")).status_code == 404


async def test_vault_admin_key_manages_only_its_vault(anon, services, vault) -> None:
    other = await create_vault(services.db, "other-vault")
    admin, _ = await create_key(services.db, scope="admin", vault=vault.name)
    foreign, foreign_info = await create_key(services.db, scope="read", vault=other.name)
    r = await anon.post("/v1/keys", json={"scope": "read", "vault": vault.name}, headers=_bearer(admin))
    assert r.status_code == 201
    assert (await anon.post("/v1/keys", json={"scope": "read"}, headers=_bearer(admin))).status_code == 403
    r = await anon.post("/v1/keys", json={"scope": "read", "vault": other.name}, headers=_bearer(admin))
    assert r.status_code == 403
    listed = (await anon.get("/v1/keys", headers=_bearer(admin))).json()["items"]
    assert {k["vault"] for k in listed} == {vault.name}
    assert (await anon.delete(f"/v1/keys/{foreign_info.id}", headers=_bearer(admin))).status_code == 404


async def test_a_verified_secret_is_not_hashed_again_and_revocation_is_immediate(services, monkeypatch) -> None:
    import app.auth as auth

    calls = []
    real = auth._verify
    monkeypatch.setattr(auth, "_verify", lambda h, s: calls.append(1) or real(h, s))
    key, info = await create_key(services.db, scope="read")
    for _ in range(3):
        assert (await authenticate(services.db, key, services.verified_secrets)).key_id == info.id
    assert len(calls) == 1
    with pytest.raises(Unauthorized):
        await authenticate(services.db, key[:-1] + ("a" if key[-1] != "a" else "b"), services.verified_secrets)
    assert len(calls) == 2  # a wrong secret is checked (and refused) every time
    await authenticate(services.db, key)  # without the services' cache: argon2 again
    assert len(calls) == 3
    await revoke_key(services.db, info.id)
    with pytest.raises(Unauthorized, match="not valid"):
        await authenticate(services.db, key)


async def test_key_cli_create_list_revoke(db_url, services, monkeypatch, capsys) -> None:
    from app.cli import main
    from app.settings import get_settings

    monkeypatch.setenv("MEMVAULT_DATABASE_URL", db_url)
    get_settings.cache_clear()
    try:
        await create_vault(services.db, "cli-vault")
        assert await asyncio.to_thread(main, ["key", "create", "--scope", "write", "--vault", "cli-vault",
                                              "--name", "laptop"]) == 0
        out = capsys.readouterr()
        key = out.out.strip()
        assert key.startswith("mvk_") and "shown this once" in out.err
        principal = await authenticate(services.db, key)
        assert (principal.scope, principal.vault_name) == ("write", "cli-vault")
        assert await asyncio.to_thread(main, ["key", "list"]) == 0
        listing = capsys.readouterr().out
        assert principal.key_id in listing and "laptop" in listing and key not in listing
        assert await asyncio.to_thread(main, ["key", "revoke", principal.key_id]) == 0
        with pytest.raises(Unauthorized):
            await authenticate(services.db, key)
        rows = await services.db.fetchall("SELECT actor, action FROM memvault.audit_log WHERE action LIKE 'key.%%' "
                                          "ORDER BY id")
        assert [r["action"] for r in rows] == ["key.create", "key.revoke"]
        assert all(r["actor"].startswith("cli:") for r in rows)
    finally:
        get_settings.cache_clear()


async def test_serve_refuses_other_hosts_without_keys_and_makes_a_local_key(services, tmp_path) -> None:
    from app.runner import _check_access, is_loopback

    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("example.org")
    await _check_access(services, "127.0.0.1", 8420, local_key=False)  # loopback: fine without keys
    with pytest.raises(ConfigError, match="refusing to listen on 0.0.0.0") as exc:
        await _check_access(services, "0.0.0.0", 8420, local_key=False)
    assert "memvault key create" in (exc.value.hint or "")
    local = services.settings.model_copy(update={"data_dir": tmp_path})
    svc = type(services)(settings=local, db=services.db, embedder=services.embedder, llm=services.llm,
                         reranker=None)
    await _check_access(svc, "0.0.0.0", 8420, local_key=True)  # makes the key first, so this host is allowed
    path = tmp_path / "api_key"  # the README's: the first database served from a data directory
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    key = path.read_text().strip()
    principal = await authenticate(services.db, key)
    assert (principal.scope, principal.all_vaults) == ("admin", True)
    await _check_access(svc, "127.0.0.1", 8420, local_key=True)
    assert path.read_text().strip() == key  # made once


async def test_a_second_database_gets_a_key_file_of_its_own(services, tmp_path) -> None:
    """`serve --local-key` on another database beside the first never overwrites the first one's key file."""
    from app.keys import ensure_local_key, local_key_paths

    first = tmp_path / "api_key"
    first.write_text("mvk_someone_elses_key\n")  # a key of another database: not valid in this one
    paths = local_key_paths(services.settings.model_copy(update={"data_dir": tmp_path, "database_url": None,
                                                                 "db_name": "second"}))
    key, created, path = await ensure_local_key(services.db, paths)
    assert created and path.name == "api_key.second" and first.read_text() == "mvk_someone_elses_key\n"
    again, created, same = await ensure_local_key(services.db, paths)
    assert (again, created, same) == (key, False, path)


async def test_mcp_and_hooks_act_with_a_key(services, vault) -> None:
    from app.interfaces.access import open_vault_as
    from app.interfaces.mcp import MemvaultTools

    with pytest.raises(Unauthorized, match="MEMVAULT_API_KEY"):
        await open_vault_as(services, None, vault.name, "write")
    read, _ = await create_key(services.db, scope="read", vault=vault.name)
    with pytest.raises(Forbidden):
        await open_vault_as(services, read, vault.name, "write")  # the hooks write
    principal, opened = await open_vault_as(services, read, None, "read")  # MCP: the key's vault by default
    assert opened.name == vault.name
    with pytest.raises(Forbidden):
        await open_vault_as(services, read, "somewhere-else", "read")
    tools = MemvaultTools(services, opened.name, principal)
    answer = await tools.call("remember", {"content": "I like tea."})
    assert answer.is_error and "scope 'read'" in answer.content[0].text
    assert not (await tools.call("recall", {"query": "tea"})).is_error
    other = await tools.call("recall", {"query": "tea", "vault": "other"})
    assert other.is_error and "bound to vault 'test-vault'" in other.content[0].text


async def test_mcp_over_http_checks_each_requests_key(services, vault, admin_key) -> None:
    import httpx

    from app.interfaces.mcp import MemvaultTools, http_app

    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                  "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                             "clientInfo": {"name": "t", "version": "1"}}}
    transport = httpx.ASGITransport(app=http_app(services, vault.name))
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        wrong = admin_key[:-1] + ("a" if admin_key[-1] != "a" else "b")
        for headers, says in (({}, "API key is required"), ({"Authorization": f"Bearer {wrong}"}, "not valid")):
            r = await http.post("/mcp", json=initialize, headers={**headers, "Accept": "application/json, "
                                                                                        "text/event-stream"})
            assert r.status_code == 401 and says in r.json()["error"]["data"]["detail"] and "www-authenticate" in r.headers
    # past the door, each call still acts as its key (a read key cannot remember)
    read, _ = await create_key(services.db, scope="read", vault=vault.name)
    tools = MemvaultTools(services, vault.name, await authenticate(services.db, read))
    assert (await tools.call("remember", {"content": "I like tea."})).is_error
