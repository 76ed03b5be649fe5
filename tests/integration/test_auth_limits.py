"""Who a failed key is counted against: the verified-secret cache belongs to one Services (not the process) and a
revoked key leaves nothing in it; X-Forwarded-For is read only from a trusted proxy, right-most untrusted address
first; knowing a key id is not enough to lock its owner out (app/auth_limit.py says why)."""

from __future__ import annotations

from contextlib import asynccontextmanager

import httpx
import pytest

from app.auth_limit import ClientAddress, FailedAuthLimiter
from app.errors import TooManyRequests
from tests.fakes.live_server import live_api


def _wrong(key: str) -> str:
    return f"mvk_{key.split('_')[1]}_{'W' * 43}"


async def test_two_services_do_not_share_verified_secrets_and_a_revoke_empties_them(
        services, client, admin_key, db_url, test_settings) -> None:
    from app.auth import authenticate
    from app.services import Services

    other = await Services.start(test_settings, url=db_url)
    try:
        assert services.verified_secrets is not other.verified_secrets
        await authenticate(services.db, admin_key, services.verified_secrets)
        key_id = admin_key.split("_")[1]
        assert services.verified_secrets.knows(key_id) and not other.verified_secrets.knows(key_id)
    finally:
        await other.close()
    created = (await client.post("/v1/keys", json={"scope": "read", "name": "cached"})).json()
    used = await client.get("/v1/vaults", headers={"Authorization": f"Bearer {created['key']}"})
    assert used.status_code == 200
    cache = client.app.state.services.verified_secrets
    assert cache.knows(created["id"])
    assert (await client.delete(f"/v1/keys/{created['id']}")).status_code == 200
    assert not cache.knows(created["id"]) and cache.knows(key_id)  # the revoked key's entries only
    again = await client.get("/v1/vaults", headers={"Authorization": f"Bearer {created['key']}"})
    assert again.status_code == 401


def test_the_client_address_comes_from_x_forwarded_for_only_behind_a_trusted_proxy() -> None:
    none = ClientAddress()
    assert none("198.51.100.7", ["1.2.3.4"]) == "198.51.100.7"  # no trusted proxy: the header is ignored
    proxies = ClientAddress(["10.0.0.0/8", "2001:db8::1"])
    assert proxies("198.51.100.7", ["1.2.3.4"]) == "198.51.100.7"  # an untrusted peer's header is ignored
    assert proxies("10.1.2.3", ["1.2.3.4"]) == "1.2.3.4"
    # the client wrote "6.6.6.6"; the proxy appended the address it saw: the right-most untrusted one counts
    assert proxies("10.1.2.3", ["6.6.6.6, 1.2.3.4"]) == "1.2.3.4"
    assert proxies("10.1.2.3", ["6.6.6.6", "1.2.3.4, 10.9.9.9"]) == "1.2.3.4"  # two headers, a second proxy
    assert proxies("2001:db8::1", ["[2001:db8::2]:443"]) == "2001:db8::2"
    assert proxies("::ffff:10.0.0.1", ["1.2.3.4:5678"]) == "1.2.3.4"  # mapped IPv4 peer, a port in the header
    assert proxies("10.1.2.3", ["10.4.4.4"]) == "10.4.4.4"  # only proxies: the left-most
    assert proxies("10.1.2.3", ["not-an-ip, 10.4.4.4"]) == "10.4.4.4"  # garbage stops the walk
    assert proxies("10.1.2.3", []) == "10.1.2.3"
    assert proxies("testclient", ["1.2.3.4"]) == "testclient"  # a peer that is no address is not trusted


def test_trusted_proxies_must_be_addresses_or_networks(monkeypatch) -> None:
    from pydantic import ValidationError

    from app.settings import Settings

    monkeypatch.setenv("MEMVAULT_TRUSTED_PROXIES", "10.0.0.0/8, 192.168.1.1")
    assert Settings().trusted_proxies == ["10.0.0.0/8", "192.168.1.1"]
    monkeypatch.setenv("MEMVAULT_TRUSTED_PROXIES", "10.0.0.0/8 proxy.local")
    with pytest.raises(ValidationError, match="proxy.local"):
        Settings()


def test_a_key_id_is_limited_per_address_with_a_ceiling_that_spares_known_addresses() -> None:
    now = [0.0]
    limiter = FailedAuthLimiter(per_key=3, per_key_all=6, per_address=100, window_s=60, known_for_s=3600,
                                clock=lambda: now[0])
    limiter.succeeded("k", "owner")
    for _ in range(3):
        limiter.check("k", "attacker")
        limiter.failed("k", "attacker")
    with pytest.raises(TooManyRequests):
        limiter.check("k", "attacker")  # the guesser is stopped...
    limiter.check("k", "owner")  # ...the owner is not
    limiter.check("k", "new")  # nor a new address of the owner's, below the ceiling
    for n in range(3):
        limiter.failed("k", f"bot{n}")
    with pytest.raises(TooManyRequests):
        limiter.check("k", "new")  # six failures from four addresses: the ceiling, for addresses not known...
    limiter.check("k", "owner")  # ...while the known address goes on
    now[0] += 3601  # the failures have left the window, and the owner's address is no longer known
    limiter.check("k", "owner")
    for n in range(6):
        limiter.failed("k", f"bot{n}")
    with pytest.raises(TooManyRequests):
        limiter.check("k", "owner")


@asynccontextmanager
async def _live(api_services, **settings):
    with live_api(api_services.settings.model_copy(update=settings), api_services.db.url) as base:
        async with httpx.AsyncClient(base_url=base, timeout=60) as http:
            yield http


async def test_spoofed_x_forwarded_for_from_an_untrusted_peer_is_ignored(api_services, admin_key) -> None:
    async with _live(api_services, auth_failures_per_address=3, auth_failures_per_key=100) as http:
        codes = [(await http.get("/v1/vaults", headers={"Authorization": f"Bearer {_wrong(admin_key)}",
                                                         "X-Forwarded-For": f"203.0.113.{n}"})).status_code
                 for n in range(5)]
    assert codes == [401, 401, 401, 429, 429]  # one address, 127.0.0.1, whatever the header says


async def test_through_a_trusted_proxy_the_limit_applies_to_the_forwarded_address(api_services, admin_key) -> None:
    async with _live(api_services, auth_failures_per_address=3, auth_failures_per_key=100,
                     trusted_proxies=["127.0.0.1"]) as http:
        async def get(xff: str, key: str) -> int:
            return (await http.get("/v1/vaults", headers={"Authorization": f"Bearer {key}",
                                                          "X-Forwarded-For": xff})).status_code

        assert [await get("203.0.113.7", _wrong(admin_key)) for _ in range(4)] == [401, 401, 401, 429]
        assert await get("203.0.113.8", _wrong(admin_key)) == 401  # another client behind the proxy: its own count
        assert await get("203.0.113.8", admin_key) == 200
        # 203.0.113.7 writing another address to the left changes nothing: the proxy appended its real one
        assert await get("203.0.113.8, 203.0.113.7", admin_key) == 429


async def test_knowing_a_key_id_does_not_lock_its_owner_out(api_services, admin_key) -> None:
    async with _live(api_services, auth_failures_per_key=10, auth_failures_per_key_all=30,
                     auth_failures_per_address=1000, trusted_proxies=["127.0.0.1"]) as http:
        async def get(xff: str, key: str) -> int:
            return (await http.get("/v1/vaults", headers={"Authorization": f"Bearer {key}",
                                                          "X-Forwarded-For": xff})).status_code

        assert await get("198.51.100.1", admin_key) == 200  # the owner, at work
        wrong = _wrong(admin_key)
        assert [await get("203.0.113.9", wrong) for _ in range(11)][-2:] == [401, 429]  # a guesser: stopped
        assert await get("198.51.100.1", admin_key) == 200  # the owner is not locked out
        assert await get("198.51.100.2", admin_key) == 200  # nor at a new address (one guesser is not the ceiling)
        for n in range(2):  # guessing from more addresses: the key id's ceiling (30) is reached
            assert [await get(f"203.0.113.{20 + n}", wrong) for _ in range(10)].count(401) == 10
        assert await get("198.51.100.3", admin_key) == 429  # an address never seen with the key waits
        assert await get("198.51.100.1", admin_key) == 200  # the owner's known addresses go on
        assert await get("198.51.100.2", admin_key) == 200
