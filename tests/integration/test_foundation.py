"""Foundation behaviour: vault isolation by RLS, one AGE graph per vault, audit append-only, health."""

from __future__ import annotations

import psycopg
import pytest

from app.errors import Conflict, InvalidInput, NotFound
from app.vaults import create_vault, drop_vault, get_vault

INSERT_SESSION = "INSERT INTO memvault.session (vault_id, id, started_at, last_turn_at) VALUES (%s, %s, now(), now())"


async def test_row_level_security_isolates_vaults(services) -> None:
    a = await create_vault(services.db, "alice")
    b = await create_vault(services.db, "bob")
    async with services.db.transaction(a.id) as conn:
        await conn.execute(INSERT_SESSION, (a.id, "s-alice"))
    async with services.db.transaction(b.id) as conn:
        await conn.execute(INSERT_SESSION, (b.id, "s-bob"))
        rows = await (await conn.execute("SELECT id FROM memvault.session")).fetchall()
        assert [r["id"] for r in rows] == ["s-bob"]
    with pytest.raises(Exception, match="row-level security"):
        async with services.db.transaction(b.id) as conn:
            await conn.execute(INSERT_SESSION, (a.id, "smuggled"))
    rows = await services.db.fetchall("SELECT id FROM memvault.session ORDER BY id")
    assert [r["id"] for r in rows] == ["s-alice", "s-bob"]  # the owner sees both


async def test_each_vault_gets_its_own_graph_and_purge_drops_it(services) -> None:
    a = await create_vault(services.db, "alice")
    b = await create_vault(services.db, "bob")
    assert a.graph_name != b.graph_name
    graphs = {r["name"] for r in await services.db.fetchall("SELECT name::text FROM ag_catalog.ag_graph")}
    assert {a.graph_name, b.graph_name} <= graphs
    idx = await services.db.fetchall("SELECT indexdef FROM pg_indexes WHERE schemaname = %s AND tablename = 'REL'",
                                     (a.graph_name,))
    defs = " ".join(r["indexdef"] for r in idx)
    assert "(start_id)" in defs and "(end_id)" in defs
    await drop_vault(services.db, "alice")
    graphs = {r["name"] for r in await services.db.fetchall("SELECT name::text FROM ag_catalog.ag_graph")}
    assert a.graph_name not in graphs and b.graph_name in graphs
    with pytest.raises(NotFound):
        await get_vault(services.db, "alice")


async def test_vault_names_are_validated_and_unique(services) -> None:
    await create_vault(services.db, "alice")
    with pytest.raises(Conflict):
        await create_vault(services.db, "alice")
    with pytest.raises(InvalidInput):
        await create_vault(services.db, "no spaces please")


def test_audit_log_is_append_only(db_url: str) -> None:
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("INSERT INTO memvault.audit_log (actor, action) VALUES ('test', 'probe')")
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="append-only"):
            conn.execute("UPDATE memvault.audit_log SET action = 'tampered'")
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="append-only"):
            conn.execute("DELETE FROM memvault.audit_log")


def test_block_update_keeps_history(db_url: str) -> None:
    with psycopg.connect(db_url, autocommit=True) as conn:
        vid = conn.execute("SELECT id FROM memvault.create_vault_v1('hist')").fetchone()[0]
        bid = conn.execute(
            """INSERT INTO memvault.block (vault_id, content, normalized, tsv, fingerprint, content_hash,
                   source_kind, trust_score, confidence, valid_at)
               VALUES (%s, 'I live in Taipei', 'I live in Taipei', memvault.sparse_document_v1('I live in Taipei'),
                   0, '\\x00', 'user', 0.6, 0.8, now()) RETURNING id""", (vid,)).fetchone()[0]
        conn.execute("UPDATE memvault.block SET content = 'I live in Tainan' WHERE id = %s", (bid,))
        conn.execute("UPDATE memvault.block SET ppr_score = 0.5 WHERE id = %s", (bid,))
        version = conn.execute("SELECT version FROM memvault.block WHERE id = %s", (bid,)).fetchone()[0]
        history = conn.execute("SELECT version, content FROM memvault.block_history WHERE id = %s", (bid,)).fetchall()
    assert version == 2  # a background score is not a new version of what the block says
    assert history == [(1, "I live in Taipei")]


async def test_embedder_mismatch_is_a_clear_error(services) -> None:
    from app.errors import ConfigError

    with pytest.raises(ConfigError, match="embedded with") as info:
        await services.db.fetchone("SELECT * FROM memvault.configure_embedder_v1('other-model', 384)")
    assert "reembed" in str(info.value)


async def test_health_reports_versions_embedder_and_worker(client) -> None:
    resp = await client.get("/health")
    assert resp.status_code == 503 and resp.headers["retry-after"]  # no worker runs in this test: jobs would not run
    body = resp.json()
    assert body["status"] == "unavailable" and "no job worker" in body["problems"][0]
    assert body["api"]["alive"] and body["database"]["reachable"] and body["queue"]["stalled"] is False
    assert body["database"]["server_version"].startswith("17")
    assert body["database"]["extensions"]["vector"].startswith("0.8")
    assert body["database"]["extensions"]["age"].startswith("1.5")
    assert body["embedder"]["dim"] > 0 and body["embedder"]["name"]
    assert body["rail2"] is None  # no second dense rail configured
    assert body["worker"]["alive"] is False  # no worker runs in this test
    assert isinstance(body["breakers"], dict)


async def test_openapi_and_docs_are_served(client) -> None:
    schema = await client.get("/docs/openapi.json")
    assert schema.status_code == 200
    assert "/health" in schema.json()["paths"]
    page = await client.get("/docs")
    assert page.status_code == 200


async def test_vault_api_errors_are_clear(client) -> None:
    resp = await client.get("/v1/vaults/nobody")
    assert resp.status_code == 404
    assert "unknown vault" in resp.json()["detail"]
    resp = await client.post("/v1/vaults", json={"name": ""})
    assert resp.status_code == 422
    resp = await client.post("/v1/vaults", json={"name": "alice"})
    assert resp.status_code == 201
    resp = await client.post("/v1/vaults", json={"name": "alice"})
    assert resp.status_code == 409


async def test_pool_parses_agtype_with_the_age_loader(services) -> None:
    from age.models import Vertex

    v = await create_vault(services.db, "graphy")
    async with services.db.transaction(v.id) as conn:
        await conn.execute("SET LOCAL search_path = ag_catalog, memvault, pg_catalog")
        cur = await conn.execute(
            f"SELECT * FROM cypher('{v.graph_name}', $$ CREATE (n:Entity {{eid: 7, name: 'Taipei'}}) RETURN n $$) "
            "AS (n agtype)")
        row = await cur.fetchone()
    vertex = row["n"]
    assert isinstance(vertex, Vertex)
    assert vertex.label == "Entity" and vertex.properties == {"eid": 7, "name": "Taipei"}


async def test_health_is_its_report_when_the_database_goes_away_midway(services, monkeypatch) -> None:
    """/health asks the database twice (the health row, then the upkeep summary); a server that goes away between
    the two is a report naming the database (503's body has `problems`), not the generic error body."""
    from app.api.health import health_report
    from app.db.queries import Q
    from app.errors import DatabaseUnavailable

    real = services.db.fetchone

    async def away_after_the_first(query, *args, **kwargs):
        if query == Q.upkeep_summary:
            raise DatabaseUnavailable("the server closed the connection")
        return await real(query, *args, **kwargs)

    monkeypatch.setattr(services.db, "fetchone", away_after_the_first)
    body = await health_report(services)
    assert body["status"] == "unavailable" and body["database"]["reachable"] is False
    assert body["problems"] == ["database unreachable: the server closed the connection"]
