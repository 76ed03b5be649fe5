"""What the write track keeps, through the real track (turns appended, sessions closed, the graph built as the
worker builds it): no chunk for the assistant's reactions, no claim from the user's requests, a switch supersedes
the fact it replaces (its relations end too), and each fact is one triple in the graph."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from app.write.graph import GraphBuild
from app.write.sessions import TurnIn

T0 = datetime(2026, 2, 2, 18, 0, tzinfo=UTC)


async def _session(services, vault, sid: str, turns: list[tuple[str, str]], at: datetime):
    res = await services.sessions.append_turns(
        vault, sid, [TurnIn(r, c, at + timedelta(minutes=i)) for i, (r, c) in enumerate(turns)])
    rows = await services.db.fetchall("SELECT id FROM memvault.block WHERE vault_id = %s ORDER BY id", (vault.id,))
    await GraphBuild(services).run(vault.id, [r["id"] for r in rows])  # the graph job after the append
    closed = await services.sessions.close(vault, sid)
    await GraphBuild(services).run(vault.id, [r.block_id for r in closed.units if r.block_id])  # ... and the close
    return res, closed


async def test_a_conversation_keeps_the_users_world_and_a_switch_replaces_the_old_fact(services, vault) -> None:
    first, _ = await _session(services, vault, "s1", [
        ("user", "I read every evening on a Kindle Paperwhite."),
        ("assistant", "What a lovely habit!"),
        ("user", "Can you recommend a mystery novel set in Norway?"),
        ("assistant", "Try The Snowman by Jo Nesbø, a thriller set in Oslo."),
    ], T0)
    chatter = first.chunks[1]
    assert chatter.decision == "REJECT" and chatter.rule == "noise.assistant_chatter"
    assert first.chunks[3].decision == "CREATE"  # the answer stays retrievable
    units = await services.db.fetchall(
        "SELECT id, category, content, source_turn_ids FROM memvault.block WHERE kind = 'unit' ORDER BY id")
    kindle = [u for u in units if "Kindle" in u["content"]]
    assert kindle, units
    asked = {u["category"] for u in units if first.turn_ids[2] in u["source_turn_ids"]}
    assert asked <= {"Topic"}, "a request is neither a fact nor an open question"

    await _session(services, vault, "s2", [
        ("user", "I switched to a Kobo Libra because the Kindle stopped charging."),
        ("assistant", "Enjoy the new reader!"),
    ], T0 + timedelta(days=10))
    old = await services.db.fetchone("SELECT superseded_by, invalid_at FROM memvault.block WHERE id = %s",
                                     (kindle[0]["id"],))
    assert old["superseded_by"] is not None and old["invalid_at"] is not None
    new = await services.db.fetchone("SELECT content FROM memvault.block WHERE id = %s", (old["superseded_by"],))
    assert "Kobo" in new["content"]

    graph = await services.db.fetchall(
        "SELECT subject, predicate, object, invalid_at FROM memvault.entity_graph WHERE vault_id = %s", (vault.id,))
    facts = [(g["subject"].lower(), g["predicate"], g["object"].lower()) for g in graph]
    assert len(facts) == len(set(facts)), f"each fact once (the chunk and its unit state it twice): {facts}"
    uses = {g["object"]: g["invalid_at"] for g in graph if g["predicate"] == "uses"}
    assert any("Kobo" in o and at is None for o, at in uses.items()), graph
    assert all(at is not None for o, at in uses.items() if "Kindle" in o), graph  # the replaced relation ended


async def test_a_possessive_name_is_one_clean_triple(services, vault) -> None:
    await _session(services, vault, "s1", [("user", "My sister's name is Wen and she teaches pottery.")], T0)
    graph = await services.db.fetchall(
        "SELECT subject, predicate, object FROM memvault.entity_graph WHERE vault_id = %s", (vault.id,))
    assert [(g["subject"], g["predicate"], g["object"]) for g in graph].count(("user's sister", "name", "Wen")) == 1
    assert not any(" is " in g["object"] for g in graph), graph


async def test_an_entity_counts_each_memory_that_names_it_once(services, vault) -> None:
    """mention_count: the memories that name the entity (the inspector's "named in N memories"), not one per graph
    build; a build run again over the same memories adds nothing."""
    from app.write.items import WriteItem

    texts = ["Alice works at Acme.", "My brother Bob moved to Berlin last spring and works at Acme."]
    await services.write.remember(vault, [WriteItem(content=t, said_at=T0 + timedelta(hours=i), source_kind="user")
                                          for i, t in enumerate(texts)])
    ids = [r["id"] for r in await services.db.fetchall(
        "SELECT id FROM memvault.block WHERE vault_id = %s ORDER BY id", (vault.id,), vault_id=vault.id)]
    await GraphBuild(services).run(vault.id, ids[:1])
    await GraphBuild(services).run(vault.id, ids[1:])
    await GraphBuild(services).run(vault.id, ids)  # a retried job
    counts = {r["name"]: r["mention_count"] for r in await services.db.fetchall(
        "SELECT name, mention_count FROM memvault.entity WHERE vault_id = %s", (vault.id,), vault_id=vault.id)}
    assert counts.get("Acme") == 2 and counts.get("Alice") == 1 and counts.get("Bob") == 1, counts
