"""Backup and portability: the same 20 recalls give the same ids in the same order after export -> import (a new
name in the same database, and a fresh database) and after pg_dump -> pg_restore."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from app.portability import export_vault, import_vault, is_memvault_export
from app.read.config import RecallOptions
from app.read.recall import recall
from app.services import Services
from app.vaults import get_vault
from app.write.graph import GraphBuild

PEOPLE = ["Anna", "Bruno", "Chen", "Dalia", "Emeka", "Freya", "Goran", "Hana", "Ivo", "Jun"]
CITIES = ["Lisbon", "Tainan", "Oslo", "Quito", "Nairobi", "Porto", "Kyoto", "Tallinn", "Accra", "Hanoi"]
HOBBIES = ["pottery", "rock climbing", "sourdough baking", "chess", "birdwatching", "salsa dancing", "kayaking",
           "watercolor painting", "beekeeping", "astronomy"]
QUERIES = [f"Where does {p} live?" for p in PEOPLE[:7]] + [f"What does {p} do on weekends?" for p in PEOPLE[3:10]] + [
    "Who works at a bakery?", "Who likes chess?", "Which city has the best coffee?", "Who adopted a dog?",
    "What did we decide about the trip?", "Who is learning Japanese?"]


def memories() -> list[dict]:
    items = []
    for i, (p, c, h) in enumerate(zip(PEOPLE, CITIES, HOBBIES, strict=True)):
        items += [{"content": f"{p} moved to {c} last spring and rents a flat near the harbour."},
                  {"content": f"{p} spends weekends on {h} with friends from work.", "category": "Preference"},
                  {"content": f"{p} works at {['a bakery', 'a bank', 'a school', 'a clinic', 'a shipyard'][i % 5]} "
                              f"in {c}."}]
    items += [{"content": "We decided to take the night train for the trip in May.", "category": "Decision"},
              {"content": "Freya adopted a dog named Pixel.", "category": "Fact"},
              {"content": "Chen is learning Japanese before moving to Kyoto."},
              {"content": "The best coffee we had was in Lisbon, near the river."}]
    return items


async def fill(client, services) -> None:
    assert (await client.post("/v1/vaults", json={"name": "orig"})).status_code == 201
    r = await client.post("/v1/vaults/orig/memories", json={"items": memories()})
    assert r.status_code == 200
    r = await client.post("/v1/vaults/orig/sessions/trip/turns", json={"turns": [
        {"role": "user", "content": "Anna said the ferry to Porto leaves at nine."},
        {"role": "assistant", "content": "Then Anna should be at the pier by half past eight."},
        {"role": "user", "content": "Bruno will bring the maps and the sourdough."}]})
    assert r.status_code == 200
    vault = await get_vault(services.db, "orig")
    ids = [r["id"] for r in await services.db.fetchall("SELECT id FROM memvault.block ORDER BY id")]
    assert (await GraphBuild(services).run(vault.id, ids)).triples > 0
    await services.db.fetchone("SELECT memvault.refresh_lexeme_stats_v1(%s)", (vault.id,))


async def recalls(services: Services, name: str) -> list[list[int]]:
    vault = await get_vault(services.db, name)
    return [(await recall(services, vault, q, RecallOptions())).ids for q in QUERIES]


async def block_rows(services: Services, name: str) -> list[tuple]:
    vault = await get_vault(services.db, name)
    return [tuple(r.values()) for r in await services.db.fetchall(
        "SELECT id, content, version, superseded_by, source_turn_ids, embedding::text AS e FROM memvault.block "
        "WHERE vault_id = %s ORDER BY id", (vault.id,))]


@pytest.fixture
def other_db(server_url, template_db):
    """Names of extra databases on the server; dropped at the end."""
    from tests.conftest import _janitor, _with_db

    made: list[str] = []

    def make(template: str | None = template_db) -> tuple[str, str]:
        name = f"mv_port_{uuid.uuid4().hex[:10]}"
        made.append(name)
        if template is not None:
            _janitor(server_url, name, template_dbname=template).init()
        return name, _with_db(server_url, name)

    yield make
    for name in made:
        _janitor(server_url, name).drop()


async def test_export_import_and_dump_restore_keep_recall(client, services, test_settings, db_url, other_db,
                                                          tmp_path: Path) -> None:
    from app.db.backup import dump, restore

    await fill(client, services)
    with_vectors = (await client.get("/v1/vaults/orig/export", params={"embeddings": "true"})).content
    without = b"".join([c.encode() async for c in export_vault(services, await get_vault(services.db, "orig"))])
    assert is_memvault_export(with_vectors.split(b"\n", 1)[0]) and b'"embedding"' not in without
    dump(test_settings, db_url, tmp_path / "db.dump")
    expected_rows = await block_rows(services, "orig")
    expected = await recalls(services, "orig")  # after the export and the dump: recall counts accesses
    assert sum(map(len, expected)) > 40

    # A new name in the same database: the ids are kept (they are unique per vault), the graph is rebuilt.
    r = await client.post("/v1/vaults/copy/import", content=with_vectors)
    assert r.status_code == 201, r.text
    assert r.json()["counts"]["graph_edges"] == r.json()["counts"]["triples"] > 0 and r.json()["reembedded"] == 0
    assert await block_rows(services, "copy") == expected_rows
    assert await recalls(services, "copy") == expected
    # Without vectors: re-embedded with the same model from the same text (batching moves the last digits).
    r = await client.post("/v1/vaults/copy2/import", content=without)
    assert r.status_code == 201 and r.json()["reembedded"] > 0
    assert [x[:-1] for x in await block_rows(services, "copy2")] == [x[:-1] for x in expected_rows]
    same = await services.db.fetchone(
        "SELECT min(1 - (a.embedding <=> b.embedding)) AS cos, count(*) AS n FROM memvault.block a "
        "JOIN memvault.vault va ON va.id = a.vault_id AND va.name = 'orig' JOIN memvault.block b ON b.id = a.id "
        "JOIN memvault.vault vb ON vb.id = b.vault_id AND vb.name = 'copy2'")
    assert same["n"] == len(expected_rows) and same["cos"] > 0.9999
    assert (await client.post("/v1/vaults/copy2/import", content=without)).status_code == 409
    truncated = with_vectors[: len(with_vectors) // 2].rsplit(b"\n", 1)[0] + b"\n"
    r = await client.post("/v1/vaults/cut/import", content=truncated)
    assert r.status_code == 422 and "truncated" in r.json()["detail"]
    assert (await client.get("/v1/vaults/cut")).status_code == 404

    # A fresh database.
    _, fresh_url = other_db()
    fresh = await Services.start(test_settings, url=fresh_url)
    try:
        report = await import_vault(fresh, "orig", with_vectors.splitlines(keepends=True))
        assert report.counts["blocks"] == len(expected_rows)
        assert await block_rows(fresh, "orig") == expected_rows
        assert await recalls(fresh, "orig") == expected
    finally:
        await fresh.close()

    # pg_dump -> pg_restore of the whole database (taken before the recalls above).
    name, _ = other_db(template=None)
    restored_url = restore(test_settings, tmp_path / "db.dump", db_url, name)
    back = await Services.start(test_settings, url=restored_url)
    try:
        assert await block_rows(back, "orig") == expected_rows
        vault = await get_vault(back.db, "orig")
        counts = await back.db.fetchone("SELECT * FROM memvault.graph_counts_v1(%s)", (vault.id,))
        assert counts["edges"] > 0
        assert await recalls(back, "orig") == expected
        graph = await back.db.fetchone(
            "SELECT count(*) AS n FROM ag_catalog.ag_graph WHERE graphid <> namespace::oid")
        assert graph["n"] == 0, "repair_graph_catalog_v1 aligned AGE's graph oids"
        await back.db.fetchone("SELECT memvault.graph_rebuild_v1(%s)", (vault.id,))  # Cypher writes work
    finally:
        await back.close()
