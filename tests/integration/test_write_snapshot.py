"""Dedup's read split around the vault's write lock (app/write/snapshot.py): the nearest blocks read before the lock
plus what changed since give, under the lock, exactly the rows ``dedup_candidates_v3`` gives then; a write that
commits between the snapshot and the lock is seen as a duplicate."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from app.db.queries import Q
from app.write.batch import layer_of
from app.write.items import WriteItem
from app.write.pipeline import WriteTrack
from app.write.snapshot import SPARE

T0 = datetime(2026, 3, 9, 12, 0, tzinfo=UTC)
FLAVOURS = ["lemon", "milk", "honey", "ginger", "mint", "jasmine", "rice", "sugar", "ice", "cinnamon", "vanilla",
            "orange", "apple", "peach"]


def chunk(n: int, text: str) -> WriteItem:
    # Raw turn chunks: only a verbatim repeat is skipped, so many near-identical ones stay apart (every probe
    # then has more neighbours than the snapshot lists, the case where changed ones can hide a nearer block).
    return WriteItem(content=text, said_at=T0 + timedelta(minutes=n), session_id="s1", source_kind="user",
                     kind="chunk")


def memory(n: int, text: str) -> WriteItem:
    return WriteItem(content=text, said_at=T0 + timedelta(hours=n), session_id="s1", source_kind="user")


async def rows_of(services, vault, query: str, params: tuple) -> list[tuple]:
    rows = await services.db.fetchall(query, params, vault_id=vault.id)
    return [(r["item"], r["block_id"], r["cosine"], r["content"], r["same_hash"], r["nearest"]) for r in rows]


async def test_the_locked_read_equals_v3_after_writes_since_the_snapshot(services, vault) -> None:
    track: WriteTrack = services.write
    await track.remember(vault, [chunk(n, f"I like green tea with {f}") for n, f in enumerate(FLAVOURS)])
    probes = track.screen([chunk(100 + n, t) for n, t in enumerate([
        "I like green tea with lemon and honey", "I like green tea with milk", "I like green tea with barley",
        "I like black coffee", "I like green tea with ice"])])
    k = track.dedup.config.candidates + track.spare  # what the locked read keeps per item
    # A transaction running when the snapshot is read, writing a near-duplicate of probe 0 in a subtransaction
    # (its rows carry the subtransaction's xid, which no pg_snapshot lists), committed after the snapshot.
    async with services.db.transaction(vault.id) as conn:
        async with conn.transaction():
            hidden = track.screen([chunk(200, "I like green tea with lemon and honey!")])
            await track.decide(vault, hidden, conn)
            await track.apply(conn, vault, hidden)
        await track.read_snapshot(vault, probes)
    snapshot = probes[0].snapshot
    assert snapshot is not None and snapshot.since is not None
    listed = snapshot.near
    assert all(len(listed[i]) == k + SPARE for i in range(len(probes))), "every probe has blocks past its list"
    async with services.db.transaction(vault.id) as conn:
        # More of probe 1's listed blocks retracted than the snapshot's margin: it is read again under the lock.
        await conn.execute("UPDATE memvault.block SET retracted_at = now() WHERE vault_id = %s AND id = ANY(%s)",
                           (vault.id, listed[1][: SPARE + 1]))
        # Probe 2's nearest takes another block's vector (as a MERGE rewrites it); one of probe 4's is superseded.
        await conn.execute("UPDATE memvault.block SET embedding = (SELECT embedding FROM memvault.block "
                           "WHERE vault_id = %s AND content = 'I like green tea with lemon') "
                           "WHERE vault_id = %s AND id = %s", (vault.id, vault.id, listed[2][0]))
        await conn.execute("UPDATE memvault.block SET invalid_at = now() WHERE vault_id = %s AND id = %s",
                           (vault.id, listed[4][0]))
    # New blocks after the snapshot, nearer than anything it listed for probes 2 and 3.
    await track.remember(vault, [chunk(300, "I like green tea with barley"), chunk(301, "I like black coffee")])
    vectors = [p.embedding for p in probes]
    digests = [p.digest for p in probes]
    layers = [layer_of(p.item.kind) for p in probes]
    items, ids, full = snapshot.params(len(probes))
    ids[-1] = 10**15  # a listed block no longer in the vault (deleted) counts as changed
    since = await rows_of(services, vault, Q.dedup_candidates_since,
                          (vault.id, snapshot.since, items, ids, full, SPARE, vectors, digests, layers, k,
                           track.dedup.config.min_cosine))
    v3 = await rows_of(services, vault, Q.dedup_candidates,
                       (vault.id, vectors, digests, layers, k, track.dedup.config.min_cosine))
    assert since == v3
    near = {(r[0], r[3]) for r in v3 if r[5]}
    assert (1, "I like green tea with lemon and honey!") in near, "the subtransaction's block, met"
    assert (3, "I like green tea with barley") in near and (4, "I like black coffee") in near, "the later blocks, met"


async def test_a_memory_committed_between_the_snapshot_and_the_lock_is_met(services, vault, monkeypatch) -> None:
    """The write reads its snapshot, another write commits a memory it repeats (not verbatim: no exact-hash hit,
    which the locked read finds by the index anyway), then the first takes the lock: it meets that block, written
    after its snapshot, and merges into it instead of creating a second memory."""
    real = WriteTrack.read_snapshot
    others: list = []

    async def read_then_another_write(self, v, prepared) -> None:
        await real(self, v, prepared)
        if not others:
            others.append(None)
            others[0] = await services.write.remember(vault, [memory(1, "I like green tea")])

    await services.write.remember(vault, [memory(0, "My dentist appointment is on Friday at 3pm")])
    monkeypatch.setattr(WriteTrack, "read_snapshot", read_then_another_write)
    [mine] = await services.write.remember(vault, [memory(2, "I like green tea, especially with jasmine")])
    [[other]] = others
    assert other.decision == "CREATE"
    assert (mine.decision, mine.block_id) == ("MERGE", other.block_id)
    n = await services.db.fetchone("SELECT count(*) AS n FROM memvault.block WHERE vault_id = %s", (vault.id,))
    assert n["n"] == 2


async def test_the_service_role_sees_another_roles_running_transaction_in_its_bound(services, api_services,
                                                                                     vault) -> None:
    """The bound comes from pg_stat_activity, whose backend_xid the service's role (no superuser) sees for every
    session of the database, another role's included (the owner's: an import, a dream): a transaction of the owner
    running when the service reads its snapshot is at or above the bound, so its blocks count as written since."""
    track: WriteTrack = api_services.write
    await services.write.remember(vault, [memory(0, "I like green tea")])
    probes = track.screen([memory(1, "I like green tea with lemon")])
    async with services.db.transaction(vault.id) as conn:
        await conn.execute("UPDATE memvault.block SET source_turn_ids = source_turn_ids WHERE vault_id = %s",
                           (vault.id,))  # takes an xid, as any write does
        row = await (await conn.execute("SELECT pg_current_xact_id()::text::bigint AS xid")).fetchone()
        # A later transaction completes meanwhile: the snapshot's xmax passes the running one's xid, so only
        # pg_stat_activity can tell the bound about it.
        await services.write.remember(vault, [memory(2, "My dentist appointment is on Friday at 3pm")])
        await track.read_snapshot(vault, probes)
    snapshot = probes[0].snapshot
    assert snapshot is not None and snapshot.since is not None
    assert snapshot.since <= row["xid"]


async def test_without_the_snapshot_the_whole_read_is_under_the_lock(services, vault, tmp_path) -> None:
    """MEMVAULT_DEDUP_SNAPSHOT=false: no read before the lock, one checkout (v3 under the lock), same decisions."""
    from tests.integration.test_read_unit_of_work import round_trips

    services.settings = services.settings.model_copy(update={"dedup_snapshot": False})
    await services.write.remember(vault, [memory(0, "I like green tea")])
    async with round_trips(services.db, tmp_path) as seen:
        [r] = await services.write.remember(vault, [memory(1, "I like green tea, especially with jasmine")])
    assert r.decision == "MERGE"
    assert seen == [3]
