"""One composition root (issue 33, item 4): ``Services`` owns every cache, breaker, counter and model, so two
services in one process share no mutable state, and the per-vault stats route reports that vault's numbers."""

from __future__ import annotations

from typing import Any

import pytest

from app.errors import TooManyRequests
from app.read.recall import recall
from app.services import Services
from tests.integration.read_helpers import put_blocks

# What two services may hold in common: values that never change once made, and what a test hands both.
IMMUTABLE = (str, int, float, bool, bytes, type(None), tuple, frozenset)


async def test_the_stats_route_reports_the_vault_s_own_numbers(client, services) -> None:
    from app.vaults import create_vault

    busy, idle = await create_vault(services.db, "busy"), await create_vault(services.db, "idle")
    await put_blocks(services, busy, ["My sister Anna moved to Berlin in March.",
                                      "The OCR project deadline is Friday."])
    for query in ("Who is Anna?", "When is the OCR deadline?"):
        r = await client.post("/v1/vaults/busy/recall", json={"query": query})
        assert r.status_code == 200, r.text
    r = await client.get("/v1/vaults/busy/recall/stats")
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["vault"] == "busy" and body["counters"]["recall.total"] == 2
    assert body["counters"]["rerank.skip.no_reranker"] == 2  # a stage's count lands with the recall's vault
    r = await client.get("/v1/vaults/idle/recall/stats")
    assert r.status_code == 200 and r.json() == {"vault": "idle", "counters": {}, "breakers": {}}
    # and a recall in the idle vault counts there, not in the busy one
    assert (await client.post("/v1/vaults/idle/recall", json={"query": "anything"})).status_code == 200
    assert (await client.get("/v1/vaults/idle/recall/stats")).json()["counters"]["recall.total"] == 1
    assert (await client.get("/v1/vaults/busy/recall/stats")).json()["counters"]["recall.total"] == 2
    assert (await client.get("/v1/vaults/nope/recall/stats")).status_code == 404


def _state(svc: Services) -> dict[str, Any]:
    """Every attribute of ``svc`` that can change, by name (what the composition root owns)."""
    return {k: v for k, v in vars(svc).items() if not isinstance(v, IMMUTABLE) and k not in SHARED_BY_THE_TEST}


# Handed to both by this test: one database pool and one settings object (pydantic: replaced, never mutated).
SHARED_BY_THE_TEST = {"db", "settings"}


async def test_two_services_in_one_process_share_no_mutable_state(services, test_settings, vault) -> None:
    await put_blocks(services, vault, ["My sister Anna moved to Berlin in March."])
    one = await Services.start(test_settings, url=services.db.url)
    two = await Services.start(test_settings, url=services.db.url)
    try:
        # Structurally: no object of one is an object of the other (models, pools, breakers, caches, counters).
        a, b = _state(one), _state(two)
        assert a.keys() == b.keys() and {"model_cache", "models", "breakers", "read_counters", "archetypes",
                                         "vault_sizes", "auth_attempts", "embedder", "llm"} <= a.keys()
        shared = [k for k in a if a[k] is b[k]]
        assert not shared, f"shared between two services: {shared}"

        # Exercised: a recall in one fills its caches and counts there; the other stays as it was.
        await recall(one, vault, "Who is Anna?")
        assert one.read_counters.get(vault.id, "recall.total") == 1
        assert two.read_counters.get(vault.id, "recall.total") == 0 and two.read_counters.totals() == {}
        assert one.vault_sizes.get(vault.id) is not None and two.vault_sizes.get(vault.id) is None
        key = (one.db.url, one.embedder.name)
        assert key in one.archetypes and key not in two.archetypes
        assert one.read.router.profiles.get(vault.id) is not None
        assert "read" not in vars(two)  # the other's read track was never even built
        # a breaker tripped in one is closed (indeed unknown) in the other
        breaker = one.breakers.get("test:backend", failures=1)
        breaker.record_failure("down")
        assert breaker.state == "open" and "test:backend" not in two.breakers.snapshot()
        assert two.breakers.get("test:backend", failures=1).state == "closed"
        # the failed-key limiter counts apart: one's key id used up its failures, two's has all of them
        for _ in range(test_settings.auth_failures_per_key):
            one.auth_attempts.failed("abcdef", None)
        with pytest.raises(TooManyRequests):
            one.auth_attempts.check("abcdef", None)
        two.auth_attempts.check("abcdef", None)
    finally:
        await one.close()
        await two.close()
