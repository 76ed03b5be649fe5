"""A session's summary is a digest of one occasion: Dedup compares it with other sessions' summaries only. It never
merges into, or supersedes, a memory or a unit (the facts it restates are its units' to merge or supersede), and a
summary repeated word for word is skipped."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from app.write.items import WriteItem
from app.write.pipeline import WriteTrack
from app.write.sessions import SessionTrack, TurnIn

T0 = datetime(2026, 4, 6, 19, 0, tzinfo=UTC)


def _turns(start: datetime, *texts: tuple[str, str]) -> list[TurnIn]:
    return [TurnIn(role, text, start + timedelta(seconds=i)) for i, (role, text) in enumerate(texts)]


async def _block(services, vault, block_id: int) -> dict:
    return await services.db.fetchone(
        "SELECT id, kind, content, invalid_at, superseded_by FROM memvault.block WHERE vault_id = %s AND id = %s",
        (vault.id, block_id), vault_id=vault.id)


async def test_a_summary_neither_merges_into_nor_supersedes_a_fact(services, vault) -> None:
    write = WriteTrack(services)
    [old] = await write.remember(vault, [WriteItem(
        content="I do yoga twice a week.", said_at=T0 - timedelta(days=30), source_kind="user")])
    # what a session's close writes first: its summary (here one that restates a newer value of the same fact)
    [digest] = await write.remember(vault, [WriteItem(
        content="I do yoga three times a week now.", said_at=T0, source_kind="assistant", kind="summary",
        category="Topic", session_id="yoga", metadata={"summary_of": "yoga", "segment": 1})])
    assert digest.decision == "CREATE", digest.reasons
    kept = await _block(services, vault, old.block_id)
    assert kept["content"] == "I do yoga twice a week." and kept["invalid_at"] is None
    assert (await _block(services, vault, digest.block_id))["kind"] == "summary"


async def test_a_sessions_units_supersede_the_old_fact_and_its_summary_stands_apart(services, vault) -> None:
    [old] = await WriteTrack(services).remember(vault, [WriteItem(
        content="I do yoga twice a week.", said_at=T0 - timedelta(days=30), source_kind="user")])
    track = SessionTrack(services)
    await track.append_turns(vault, "yoga", _turns(T0, ("user", "I do yoga three times a week now."),
                                                   ("assistant", "Three times a week is a good rhythm.")))
    closed = await track.close(vault, "yoga")
    summary = await _block(services, vault, closed.summary_block_id)
    assert summary["kind"] == "summary" and summary["invalid_at"] is None
    superseded = await _block(services, vault, old.block_id)
    assert superseded["superseded_by"] in {u.block_id for u in closed.units}, (superseded, closed.units)


async def test_a_summary_repeated_word_for_word_is_skipped(services, vault) -> None:
    track = SessionTrack(services)
    said = (("user", "We planned the Kyoto trip: three nights in Gion, then Nara for a day."),
            ("assistant", "Gion for three nights and a day in Nara, noted."))
    await track.append_turns(vault, "trip-a", _turns(T0, *said))
    first = await track.close(vault, "trip-a")
    await track.append_turns(vault, "trip-b", _turns(T0 + timedelta(days=1), *said))
    second = await track.close(vault, "trip-b")
    summaries = await services.db.fetchall(
        "SELECT id, content FROM memvault.block WHERE vault_id = %s AND kind = 'summary'", (vault.id,),
        vault_id=vault.id)
    assert len(summaries) == 1, summaries  # the same summary twice: the second is a SKIP onto the first
    assert second.summary_block_id == first.summary_block_id == summaries[0]["id"]
