"""The round trips of a session's append and close while they hold the vault's write lock (issue 33): every
other writer of the vault waits for them, so what does not need an answer before the next statement travels with
one that does (psycopg's pipeline, app/db/connector.py). Counted from libpq's trace, as for a recall."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from app.write.sessions import SessionTrack, TurnIn
from tests.integration.test_read_unit_of_work import round_trips

T0 = datetime(2026, 3, 9, 12, 0, tzinfo=UTC)
TURNS = [("user", "I moved to Lisbon last spring for a job at Acme as a data engineer."),
         ("assistant", "Congratulations on the move! How is Lisbon treating you?"),
         ("user", "I love it. I switched from tea to coffee, and I'm learning Portuguese on Tuesdays."),
         ("assistant", "Nice. Remember your dentist appointment with Dr. Lin on Friday at 3pm.")]


def _turns(offset: int = 0) -> list[TurnIn]:
    return [TurnIn(role, text, T0 + timedelta(minutes=offset + n)) for n, (role, text) in enumerate(TURNS)]


async def test_an_append_holds_the_lock_for_two_round_trips(services, vault, tmp_path) -> None:
    """Before the lock, the session's last turn (the chunks' context) is read: one round trip. Under it: BEGIN,
    scope, lock, the last turn again, the archive's insert, the block ids and the candidates; then the apply, the
    graph and prefetch jobs and COMMIT. Before: 6 (the last turn, the archive, the ids, the candidates and the
    graph job's id each read on their own, the prefetch job's id with COMMIT)."""
    track = SessionTrack(services)
    await track.append_turns(vault, "s1", _turns())  # a vault with blocks: candidates to read
    async with round_trips(services.db, tmp_path) as seen:
        res = await track.append_turns(vault, "s1", _turns(10))
    assert {r.decision for r in res.chunks} <= {"CREATE", "SKIP"} and len(res.turn_ids) == len(TURNS)
    print(f"\nround trips per append: {seen}")
    assert seen == [1, 2]


async def test_a_session_moved_meanwhile_still_rolls_the_append_back(services, vault, monkeypatch) -> None:
    """The last turn is read after Dedup's reads now: a turn appended between the chunks' embedding and the lock
    still makes the append start again (embedded with the new context), its first archive rolled back."""
    track = SessionTrack(services)
    await track.append_turns(vault, "s1", _turns())
    real = track.write.locked
    calls = 0

    async def sneaky(v, prepared, work, **kw):
        nonlocal calls
        calls += 1
        if calls == 1:  # another writer's turn lands after this append read the session's last turn
            await SessionTrack(services).append_turns(vault, "s1", [TurnIn("user", "Also, I adopted a cat.",
                                                                           T0 + timedelta(minutes=5))])
        return await real(v, prepared, work, **kw)

    monkeypatch.setattr(track.write, "locked", sneaky)
    res = await track.append_turns(vault, "s1", _turns(10))
    assert calls == 2
    rows = await services.db.fetchall("SELECT seq, content FROM memvault.turn WHERE session_id = 's1' ORDER BY seq",
                                      vault_id=vault.id)
    assert [r["content"] for r in rows] == [t for _, t in TURNS] + ["Also, I adopted a cat."] + [t for _, t in TURNS]
    assert [r["seq"] for r in rows] == list(range(1, len(rows) + 1))  # nothing of the first attempt left
    assert len(res.turn_ids) == len(TURNS)


async def test_a_close_holds_the_lock_for_two_round_trips(services, vault, tmp_path) -> None:
    """Under the lock: BEGIN, scope, lock, the session's close (read after Dedup's reads: a concurrent close makes
    this one write nothing), the block ids and the candidates; then the apply with the graph job and COMMIT.
    Before: 5 (the ids, the candidates, the graph job's id and the session's close each read on their own)."""
    track = SessionTrack(services)
    await track.append_turns(vault, "s1", _turns())
    async with round_trips(services.db, tmp_path) as seen:
        closed = await track.close(vault, "s1")
    assert closed.units
    print(f"\nround trips per close: {seen}")
    assert seen[-1] == 2


async def test_two_closes_of_one_session_at_once_write_its_units_once(services, vault) -> None:
    """Both read the session open and extract its units before the lock; the second to hold it finds the segment
    closed by the first (the session's close, read after its Dedup reads) and writes nothing: no unit twice."""
    import asyncio

    from app.errors import Conflict

    await SessionTrack(services).append_turns(vault, "s1", _turns())
    outcomes = await asyncio.gather(*(SessionTrack(services).close(vault, "s1") for _ in range(2)),
                                    return_exceptions=True)
    closed = [o for o in outcomes if not isinstance(o, BaseException)]
    assert len(closed) == 1 and [type(o) for o in outcomes if isinstance(o, BaseException)] == [Conflict]
    rows = await services.db.fetchall("SELECT kind, count(*)::int AS n FROM memvault.block WHERE kind <> 'chunk' "
                                      "GROUP BY kind ORDER BY kind", vault_id=vault.id)
    units = sum(1 for u in closed[0].units if u.decision == "CREATE")
    assert {r["kind"]: r["n"] for r in rows} == {"summary": 1, "unit": units}
    session = await services.db.fetchone("SELECT segments, closed_at FROM memvault.session WHERE id = 's1'",
                                         vault_id=vault.id)
    assert session["segments"] == 1 and session["closed_at"] is not None
