"""A turn's chunks carry the end of the previous turn as context: embedded and indexed with them, not shown."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np

from app.db.connector import as_array
from app.write.items import WriteItem, embedding_text
from app.write.sessions import SessionTrack, TurnIn, turn_context

T0 = datetime(2026, 3, 9, 12, 0, tzinfo=UTC)


def test_turn_context_is_the_end_of_the_previous_turn() -> None:
    assert turn_context(None) is None
    assert turn_context("   ") is None
    assert turn_context("How did the kids handle the accident?") == "How did the kids handle the accident?"
    long = " ".join(f"w{i}" for i in range(80))
    assert turn_context(long, words=5) == "… w75 w76 w77 w78 w79"


def test_embedding_text_puts_the_context_first() -> None:
    plain = WriteItem(content="They were scared.", said_at=T0)
    assert plain.embedding_text("They were scared.") == "They were scared."
    with_ctx = WriteItem(content="They were scared.", said_at=T0, context="How did the kids take the accident?")
    assert with_ctx.embedding_text("They were scared.") == "How did the kids take the accident?\nThey were scared."


async def _chunks(services, vault) -> list[dict]:
    rows = await services.db.fetchall(
        "SELECT b.content, b.metadata, b.normalized, b.embedding, "
        "b.tsv @@ to_tsquery('english', 'accident') AS matches_accident "
        "FROM memvault.block b WHERE b.kind = 'chunk' ORDER BY b.id", vault_id=vault.id)
    # what reembed and the second rail embed for a stored block (the write track's one definition)
    return [{**r, "embedded": embedding_text(r["metadata"].get("context"), r["normalized"])} for r in rows]


async def test_chunks_carry_the_previous_turn_as_context_across_calls(services, vault) -> None:
    track = SessionTrack(services)
    await track.append_turns(vault, "s1", [
        TurnIn("user", "Melanie, how did the kids handle the accident last week?", T0),
        TurnIn("assistant", "They were scared but we reassured them and explained their brother would be OK.", T0),
    ])
    await track.append_turns(vault, "s1", [TurnIn("user", "I am glad everyone is fine now.", T0)])
    first, answer, later = await _chunks(services, vault)

    assert "context" not in first["metadata"]  # the session's first turn has nothing before it
    assert answer["content"] == "They were scared but we reassured them and explained their brother would be OK."
    assert answer["metadata"]["context"] == "Melanie, how did the kids handle the accident last week?"
    # A later call takes the last archived turn of the session as context.
    assert later["metadata"]["context"].startswith("They were scared")
    # The sparse rail finds the answer by a word only its context holds; the content itself stays unchanged.
    assert answer["matches_accident"] and "accident" not in answer["content"]
    # The vector is the embedding of context + memory, and reembed rebuilds exactly that text.
    expected = services.embedder.embed_documents([answer["embedded"]])[0]
    assert answer["embedded"] == (
        "Melanie, how did the kids handle the accident last week?\n"
        "They were scared but we reassured them and explained their brother would be OK.")
    assert np.allclose(as_array(answer["embedding"]), expected, atol=1e-5)


async def test_vectors_are_stored_in_the_row(services) -> None:
    rows = await services.db.fetchall(
        "SELECT attrelid::regclass::text AS tbl, attstorage FROM pg_attribute "
        "WHERE attname = 'embedding' AND attrelid IN ('memvault.block'::regclass, 'memvault.entity'::regclass)")
    assert {r["tbl"]: r["attstorage"] for r in rows} == {"memvault.block": "m", "memvault.entity": "m"}


async def test_only_a_turns_first_chunk_carries_the_context(services, vault) -> None:
    """What a turn follows belongs to its start: its later chunks are embedded on their own."""
    track = SessionTrack(services)
    long_answer = "\n\n".join(f"Paragraph {i}: " + "the itinerary covers museums, trains and food. " * 8
                              for i in range(4))
    await track.append_turns(vault, "s1", [TurnIn("user", "Plan my trip to Kyoto, please.", T0),
                                           TurnIn("assistant", long_answer, T0)])
    _question, *parts = await _chunks(services, vault)
    assert len(parts) >= 2
    assert parts[0]["metadata"]["context"] == "Plan my trip to Kyoto, please."
    assert all("context" not in p["metadata"] and p["embedded"] == p["content"] for p in parts[1:])
