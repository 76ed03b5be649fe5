"""The psql views (migration 0018): memories with provenance, the entity graph, memory health, facts as of a date;
all under row-level security, as a DBA's psql and the service's role each see them."""

from __future__ import annotations

from datetime import UTC, datetime

import psycopg

from app.vaults import create_vault
from app.write.graph import GraphBuild
from app.write.items import WriteItem
from app.write.pipeline import WriteTrack


def _item(text: str, when: str, category: str = "Fact") -> WriteItem:
    return WriteItem(content=text, said_at=datetime.fromisoformat(when), source_kind="user", category=category)


async def _seed(services):
    alice = await create_vault(services.db, "alice")
    bob = await create_vault(services.db, "bob")
    track = WriteTrack(services)
    first = await track.remember(alice, [_item("Alice lives in Paris.", "2024-01-01T00:00:00+00:00"),
                                         _item("Alice works at Acme.", "2024-01-02T00:00:00+00:00")])
    again = await track.remember(alice, [_item("Alice works at Acme.", "2024-01-03T00:00:00+00:00")])
    assert again[0].decision == "SKIP"
    await GraphBuild(services).run(alice.id, [r.block_id for r in first])
    await track.remember(bob, [_item("Bob prefers tea.", "2024-02-01T00:00:00+00:00", "Preference")])
    return alice, bob, [r.block_id for r in first]


async def test_views_for_the_dba_and_under_rls(services, db_url) -> None:
    alice, bob, ids = await _seed(services)
    with psycopg.connect(db_url) as conn:
        rows = conn.execute("SELECT vault, id, state, sources FROM memvault.memories ORDER BY id").fetchall()
        assert [(r[0], r[2]) for r in rows] == [("alice", "current"), ("alice", "current"), ("bob", "current")]
        works = next(r for r in rows if r[1] == ids[1])
        assert [s["decision"] for s in works[3]] == ["CREATE", "SKIP"]  # both places it was said

        graph = conn.execute("SELECT subject, object, evidence FROM memvault.entity_graph WHERE vault = 'alice' "
                             "ORDER BY triple_id").fetchall()
        assert {(g[0], g[1]) for g in graph} == {("Alice", "Paris"), ("Alice", "Acme")}
        assert all(g[2].startswith("Alice ") for g in graph)

        health = {r[0]: tuple(float(x) if hasattr(x, "as_integer_ratio") and not isinstance(x, int) else x
                              for x in r) for r in conn.execute(
            "SELECT vault, memories, dedup_rate, duplicate_rate, stale_facts, hot, mean_decay FROM "
            "memvault.memory_health ORDER BY vault")}
        assert health["alice"][1:6] == (2, 0.333, 0.0, 0, 2)  # 1 of 3 writes was already known
        assert 0.7 <= float(health["alice"][6]) <= 1.0
        assert health["bob"][1] == 1

        # the service's role, scoped to bob: row-level security hides alice's rows in every view
        with conn.transaction():
            conn.execute("SELECT set_config('memvault.vault_id', %s, true), set_config('role', 'memvault_app', true)",
                         (str(bob.id),))
            assert [r[0] for r in conn.execute("SELECT vault FROM memvault.memories")] == ["bob"]
            assert conn.execute("SELECT count(*) FROM memvault.entity_graph").fetchone()[0] == 0
            assert [r[0] for r in conn.execute("SELECT vault FROM memvault.memory_health")] == ["bob"]
            assert conn.execute("SELECT count(*) FROM memvault.facts_as_of_v1('alice', now())").fetchone()[0] == 0


async def test_facts_as_of_a_date(services, db_url) -> None:
    alice, _, ids = await _seed(services)
    moved = await WriteTrack(services).remember(alice, [_item("Alice lives in Lyon.", "2024-06-01T00:00:00+00:00")])
    with psycopg.connect(db_url) as conn:
        conn.execute("UPDATE memvault.block SET invalid_at = '2024-06-01', superseded_by = %s "
                     "WHERE vault_id = %s AND id = %s", (moved[0].block_id, alice.id, ids[0]))
        conn.commit()

        def facts(at: str) -> set[tuple[str, str]]:
            return {(k, f) for k, f in conn.execute("SELECT kind, fact FROM memvault.facts_as_of_v1('alice', %s)",
                                                    (at,))}

        assert facts("2024-03-01") == {("memory", "Alice lives in Paris."), ("memory", "Alice works at Acme."),
                                       ("relation", "Alice lives_in Paris"), ("relation", "Alice works_at Acme")}
        assert facts("2023-12-01") == set()  # nothing was true yet
        july = facts("2024-07-01")
        assert ("memory", "Alice lives in Lyon.") in july and ("memory", "Alice lives in Paris.") not in july
        # what the vault believed on Jan 2 about March: the later move was not known yet, nor were graph facts
        believed = {f for k, f in conn.execute(
            "SELECT kind, fact FROM memvault.facts_as_of_v1('alice', '2024-07-01', %s)",
            (datetime.now(UTC).replace(year=2000),))}
        assert believed == set()


async def test_the_documented_cypher_examples_run(services, db_url) -> None:
    """The Cypher statements of docs/psql.md (the README's psql section points there), as psql runs them (``:'g'``
    is the graph's name)."""
    import re
    from pathlib import Path

    alice, _, _ = await _seed(services)
    doc = (Path(__file__).resolve().parents[2] / "docs" / "psql.md").read_text()
    statements = re.findall(r"SELECT \* FROM cypher\(:'g',.*?;", doc, flags=re.S)
    assert len(statements) >= 3
    with psycopg.connect(db_url) as conn:
        conn.execute("LOAD 'age'")
        conn.execute('SET search_path = ag_catalog, "$user", public')
        results = [conn.execute(s.replace(":'g'", f"'{alice.graph_name}'")).fetchall() for s in statements]
    assert ('"Alice"', '"lives_in"', '"Paris"') in results[0]
    assert {r[0] for r in results[2]} >= {'"Paris"', '"Acme"'}
