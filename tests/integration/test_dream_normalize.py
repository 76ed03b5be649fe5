"""The consolidate stage's normalization of stored facts: predicates to their canonical names, entity names
cleaned (dates in ISO 8601), entities that are one merged, in the tables and the AGE graph, idempotently."""

from __future__ import annotations


import pytest
from psycopg import sql

from app.background.dream import DreamLoop
from app.background.normalize import Entity, clean_name, iso_date, plan_entities
from tests.integration.read_helpers import Mem, put_blocks


@pytest.mark.parametrize(("name", "clean"), [
    ("  Boston  ", "Boston"), ('"Luna"', "Luna"), ("New   York City,", "New York City"), ("Dr. Lin", "Dr. Lin"),
    ("May 5th, 2023", "2023-05-05"), ("5 May 2023", "2023-05-05"), ("2023/05/05", "2023-05-05"),
    ("March 2024", "2024-03"), ("2023年5月5日", "2023-05-05"), ("May", "May"), ("Ｔａｉｐｅｉ", "Taipei"),
    ("...", "..."), ("Friday", "Friday"),
])
def test_clean_name(name: str, clean: str) -> None:
    assert clean_name(name) == clean


def test_a_date_needs_its_year() -> None:
    assert iso_date("May 5") is None and iso_date("Sept 9, 2021") == "2021-09-09"
    assert iso_date("next week") is None and iso_date("Friday") is None and iso_date("5/3/24") is None
    assert iso_date("Acme 2024") is None and iso_date("the 2023-05-05 release") is None  # a date in a name


def test_dates_are_read_by_the_write_tracks_grammar_and_locale() -> None:
    from app.write.normalize.temporal import TemporalNormalizer

    assert iso_date("05/03/2023") == "2023-05-03"
    assert iso_date("05/03/2023", TemporalNormalizer(day_first=True)) == "2023-03-05"
    assert clean_name("2023年3月", TemporalNormalizer(day_first=True)) == "2023-03"


def test_plan_keeps_the_most_mentioned_and_is_empty_when_clean() -> None:
    ents = [Entity(1, "the Boston", "theboston", 1), Entity(2, "Boston", "boston", 5), Entity(3, "May 5th, 2023",
                                                                                          "may5th2023", 2)]
    plan = plan_entities(ents)
    assert plan.merges == [{"drop": 1, "keep": 2}]
    assert plan.renames == [{"id": 3, "name": "2023-05-05", "key": "20230505"}]
    clean = plan_entities([Entity(2, "Boston", "boston", 5), Entity(3, "2023-05-05", "20230505", 2)])
    assert clean.merges == [] and clean.renames == []


async def _facts(services, vault) -> dict[str, int]:
    """Entities as an older extractor or an import left them, linked by triples with free-worded predicates."""
    names = {"Ann": "ann", "the Boston": "theboston", "Boston": "boston", "May 5th, 2023": "may5th2023",
             "Acme": "acme"}
    facts = [("Ann", "Resides In", "the Boston"), ("Ann", "lives_in", "Boston"), ("Ann", "works-for", "Acme"),
             ("Ann", "started on", "May 5th, 2023")]
    blocks = await put_blocks(services, vault, [Mem(f"{s} {p} {o}.", session_id="s1") for s, p, o in facts])
    ids: dict[str, int] = {}
    async with services.db.transaction(vault.id) as conn:
        for name, key in names.items():
            cur = await conn.execute("INSERT INTO memvault.entity (vault_id, name, canonical_key, mention_count) "
                                     "VALUES (%s, %s, %s, %s) RETURNING id",
                                     (vault.id, name, key, 3 if name == "Boston" else 1))
            ids[name] = (await cur.fetchone())["id"]
        for (s, p, o), bid in zip(facts, blocks, strict=True):
            await conn.execute(
                "INSERT INTO memvault.triple (vault_id, subject_id, predicate, object_id, evidence_block_id, "
                "confidence, valid_at) VALUES (%s, %s, %s, %s, %s, 0.8, now() - interval '1 day')",
                (vault.id, ids[s], p, ids[o], bid))
        await conn.execute("SELECT memvault.graph_rebuild_v1(%s)", (vault.id,))
    return ids


async def _graph_edges(services, vault) -> list[tuple[str, str, str]]:
    async with services.db.transaction() as conn:
        await conn.execute("SET LOCAL search_path = ag_catalog, memvault, public")
        cur = await conn.execute(sql.SQL(
        "SELECT * FROM ag_catalog.cypher({}, $$ MATCH (a:Entity)-[e:REL]->(b:Entity) "
            "RETURN a.name, e.pred, b.name $$) AS (a ag_catalog.agtype, p ag_catalog.agtype, b ag_catalog.agtype)"
        ).format(sql.Literal(vault.graph_name)))
        rows = await cur.fetchall()
    return sorted((r["a"], r["p"], r["b"]) for r in rows)


async def test_the_dream_normalizes_predicates_names_and_dates_once(services, vault) -> None:
    ids = await _facts(services, vault)
    run = (await DreamLoop(services).run(vault, force=True)).run
    normalized = run["stats"]["consolidate"]["normalized"]
    assert normalized["predicates"]["triples"] == 3
    assert normalized["predicates"]["renamed"] == {"Resides In -> lives_in": 1, "works-for -> works_at": 1,
                                                   "started on -> started_on": 1}
    assert normalized["entities"]["merged"] == 1 and normalized["entities"]["renamed"] == 1
    triples = await services.db.fetchall(
        "SELECT s.name AS s, t.predicate AS p, o.name AS o FROM memvault.triple t "
        "JOIN memvault.entity s ON s.vault_id = t.vault_id AND s.id = t.subject_id "
        "JOIN memvault.entity o ON o.vault_id = t.vault_id AND o.id = t.object_id WHERE t.vault_id = %s "
        "ORDER BY t.id", (vault.id,), vault_id=vault.id)
    expected = [("Ann", "lives_in", "Boston"), ("Ann", "lives_in", "Boston"), ("Ann", "works_at", "Acme"),
                ("Ann", "started_on", "2023-05-05")]
    assert [(t["s"], t["p"], t["o"]) for t in triples] == expected
    # the merged entity is gone, its name an alias of the kept one; the graph says what the tables say
    gone = await services.db.fetchone("SELECT count(*) AS n FROM memvault.entity WHERE vault_id = %s AND id = %s",
                                      (vault.id, ids["the Boston"]), vault_id=vault.id)
    alias = await services.db.fetchone("SELECT entity_id FROM memvault.entity_alias WHERE vault_id = %s "
                                       "AND alias_key = 'theboston'", (vault.id,), vault_id=vault.id)
    assert gone["n"] == 0 and alias["entity_id"] == ids["Boston"]
    assert await _graph_edges(services, vault) == sorted(expected)
    counts = await services.db.fetchone("SELECT * FROM memvault.graph_counts_v1(%s)", (vault.id,))
    assert (counts["vertices"], counts["edges"]) == (4, 4)
    # a second pass has nothing left to do
    again = (await DreamLoop(services).run(vault, force=True)).run["stats"]["consolidate"]["normalized"]
    assert again["predicates"]["triples"] == 0 and again["entities"]["merged"] == again["entities"]["renamed"] == 0
    audit = await services.db.fetchall("SELECT action FROM memvault.audit_log WHERE vault_id = %s AND action LIKE "
                                       "'dream.normalize%%' ORDER BY id", (vault.id,), vault_id=vault.id)
    assert [a["action"] for a in audit] == ["dream.normalize_predicates", "dream.normalize_entities"]
