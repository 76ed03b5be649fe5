"""The recall's self-scoping statements (round 3 of docs/recall-cpu.md: recall_fast_v3, record_recall_v2,
prefetch_get_v2; rounds 4 and 6: sparse_ahead_v1/_v2, recall_fast_v5), logged in as the service's role
(memvault_service), as `memvault serve` is: each enters the vault
it is given (memvault._enter_vault_v1: row-level security's vault, the actor, the memvault_app role) for its own
implicit transaction only; it returns exactly what its plain twin returns in that vault's transaction; a vault
transaction (memvault_app, e.g. vault A's) may not call them to reach vault B; and the connector alone puts the
vault in (Database.scoped, from the unit's vault)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import psycopg
import pytest

from app.db.connector import Database, act_as
from app.db.queries import Q
from app.errors import DatabaseError
from app.safety.verdict import RULES
from app.vaults import create_vault
from app.write.items import WriteItem

T0 = datetime(2026, 3, 9, 12, 0, tzinfo=UTC)


async def _two_vaults(services, vault):
    other = await create_vault(services.db, "bob")
    await services.write.remember(vault, [WriteItem(content="I live in Taipei near the night market", said_at=T0),
                                          WriteItem(content="My dentist is Dr Lin on Friday", said_at=T0)])
    await services.write.remember(other, [WriteItem(content="I live in Lisbon near the river", said_at=T0),
                                          WriteItem(content="My dentist is Dr Costa on Monday", said_at=T0)])
    ids = {}
    for v in (vault, other):
        rows = await services.db.fetchall("SELECT id FROM memvault.block", vault_id=v.id)
        ids[v.id] = {r["id"] for r in rows}
    return other, ids


async def _search_params(services, query: str) -> tuple:
    qvec = await services.models.embed_query(services.embedder, query)
    search = {"dense_n": 20, "sparse_n": 20, "vault_blocks": 4, "exact": True}
    return (qvec, query, T0 + timedelta(days=2), None, json.dumps(search), json.dumps({}), 10)  # a fixed as_of


async def test_a_scoped_search_sees_its_vault_only_and_equals_the_plain_one(services, api_services, vault) -> None:
    other, ids = await _two_vaults(services, vault)
    db = api_services.db  # memvault_service
    params = await _search_params(services, "where do I live? who is my dentist?")
    act_as("test:scoped")
    async with db.session() as conn:
        for v in (vault, other):
            scoped = await (await Database.scoped(conn, v.id, Q.recall_fast_scoped, (*params, RULES))).fetchall()
            assert scoped and {r["id"] for r in scoped} <= ids[v.id]
            # the scope ended with the statement's implicit transaction: the login role again, no vault
            row = await (await conn.execute(
                "SELECT current_user AS who, current_setting('memvault.vault_id', true) AS vault")).fetchone()
            assert row["who"] == "memvault_service" and not row["vault"]
            plain = await db.fetchall(Q.recall_fast, params, vault_id=v.id)
            assert [(r["id"], r["score"], r["factors"]) for r in scoped] == \
                [(r["id"], r["score"], r["factors"]) for r in plain]
            # the sparse side sent ahead (round 4): its vault's blocks only, and the search given it is the same
            ahead = await (await Database.scoped(conn, v.id, Q.sparse_ahead, (params[1], *params[2:5]))).fetchone()
            assert ahead["sparse"] and set(ahead["sparse"]) <= ids[v.id]
            given = await (await Database.scoped(conn, v.id, Q.recall_fast_given_scoped, (
                params[0], *params[2:7], ahead["sparse"], ahead["prf"], RULES))).fetchall()
            assert given == scoped
            # the prefetch probe sent with the sparse side (round 6): the same rankings, a miss for an unknown hash
            probed = await (await Database.scoped(conn, v.id, Q.sparse_ahead_probed, (
                params[1], *params[2:5], b"\x00" * 32))).fetchone()
            assert probed["sparse"] == ahead["sparse"] and probed["probed"] and probed["created_at"] is None
        logged = await (await Database.scoped(conn, other.id, Q.record_recall_scoped, (
            sorted(ids[other.id]), "who is my dentist?", "factual", "LOCAL", "fast", json.dumps({}), 12, None,
            False, json.dumps([]), True, RULES, [], [], []))).fetchone()
    row = await services.db.fetchone("SELECT vault_id, returned_ids FROM memvault.recall_log WHERE id = %s",
                                     (logged["recall_id"],))
    assert row["vault_id"] == other.id and set(row["returned_ids"]) == ids[other.id]
    usage = await services.db.fetchall("SELECT vault_id, access_count FROM memvault.block_usage")
    assert {r["vault_id"] for r in usage if r["access_count"]} == {other.id}


@pytest.mark.parametrize("name", ["recall_fast_scoped", "record_recall_scoped", "prefetch_get_scoped",
                                  "sparse_ahead", "recall_fast_given_scoped", "sparse_ahead_probed"])
async def test_a_vault_transaction_cannot_call_them_to_reach_another_vault(services, api_services, vault,
                                                                           name) -> None:
    """Inside vault A's transaction (memvault_app, as every request's), vault B's id passed to a self-scoping
    function is refused: only the login role may call them, and it never runs a client's SQL."""
    other, _ = await _two_vaults(services, vault)
    args = {"recall_fast_scoped": (*await _search_params(services, "where do I live?"), RULES),
            "record_recall_scoped": ([], "q", "factual", "LOCAL", "fast", json.dumps({}), 0, None, False,
                                     json.dumps([]), False, RULES, [], [], []),
            "prefetch_get_scoped": (b"\x00" * 32,),
            "sparse_ahead": ("live", T0, None, json.dumps({"sparse_n": 20, "vault_blocks": 4})),
            "recall_fast_given_scoped": (await services.models.embed_query(services.embedder, "live"), T0, None,
                                         json.dumps({"dense_n": 20, "exact": True}), json.dumps({}), 10, [], None,
                                         RULES),
            "sparse_ahead_probed": ("live", T0, None, json.dumps({"sparse_n": 20, "vault_blocks": 4}),
                                    b"\x00" * 32)}[name]
    with pytest.raises(DatabaseError) as err:
        async with api_services.db.transaction(vault.id) as conn:
            await conn.execute(getattr(Q, name), (str(other.id), "", *args))
    assert isinstance(err.value.__cause__, psycopg.errors.InsufficientPrivilege)
    with pytest.raises(DatabaseError) as err:
        async with api_services.db.transaction(vault.id) as conn:
            await conn.execute("SELECT memvault._enter_vault_v1(%s, '')", (other.id,))
    assert isinstance(err.value.__cause__, psycopg.errors.InsufficientPrivilege)


async def test_the_unit_sends_the_recall_with_its_own_vault(api_services, services, vault) -> None:
    """A whole recall on the service's login: the unit's statements carry the unit's vault (the one the request
    was verified for); the cards are that vault's memories only, and its log row is written in that vault."""
    other, ids = await _two_vaults(services, vault)
    result = await api_services.read.recall(other, "who is my dentist?")
    assert result.ids and set(result.ids) <= ids[other.id]
    row = await services.db.fetchone("SELECT vault_id FROM memvault.recall_log WHERE id = %s",
                                     (result.meta["recall_id"],))
    assert row["vault_id"] == other.id
