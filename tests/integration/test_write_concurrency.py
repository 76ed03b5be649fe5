"""Concurrent writes to one vault leave it as the same writes one at a time would (issue 33, item 1): Dedup reads,
decides and applies under the vault's write lock in one transaction (app/write/serial.py), with no model call
inside it, and a MERGE / SUPERSEDE whose target changed meanwhile decides again instead of changing nothing."""

from __future__ import annotations

import asyncio
import itertools
from datetime import UTC, datetime, timedelta

import httpx
import numpy as np
import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.errors import StaleWrite
from app.models.base import LLM, Embedder
from app.services import Services
from app.vaults import create_vault
from app.write.items import WriteItem
from app.write.pipeline import WriteTrack
from app.write.sessions import SessionTrack, TurnIn
from tests.integration.served import served
from tests.integration.test_write_batch import assert_same_vaults

T0 = datetime(2026, 3, 9, 12, 0, tzinfo=UTC)
# Near-duplicates meeting every Dedup rule under the heuristic LLM: exact and near repeats (SKIP), additions
# (MERGE), changed facts (SUPERSEDE), and unrelated memories (CREATE).
TEXTS = [
    "I like green tea",
    "I like green tea, especially with jasmine",
    "I like green tea, especially with jasmine and honey",
    "My dentist appointment is on Friday at 3pm",
    "My dentist appointment is on Monday at 10am",
    "My dentist appointment is on Tuesday at 9am",
    "I am allergic to peanuts",
    "I am allergic to peanuts.",
    "My favourite editor is Vim",
    "My favourite editor is Vim and I use it every day",
]
FIXTURES = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
_names = itertools.count()


def item(n: int, text: str) -> WriteItem:
    """The n-th write: its own valid time, so which of two facts is newer does not depend on arrival."""
    return WriteItem(content=text, said_at=T0 + timedelta(hours=n), session_id="s1", source_kind="user")


async def concurrently_then_serially(services, texts: list[str],
                                     delays: list[float] | None = None) -> tuple[list[str], object]:
    """Write ``texts`` into one vault all at once, then into another one at a time in the order the first
    committed them; both vaults must end the same, each write with the same decision."""
    track = services.write
    together = await create_vault(services.db, f"together-{next(_names)}")
    alone = await create_vault(services.db, f"alone-{next(_names)}")
    order: list[int] = []

    async def one(n: int, text: str) -> list:
        if delays:
            await asyncio.sleep(delays[n])

        async def hook(conn, results) -> None:  # runs in the write's transaction, under the vault's lock
            order.append(n)

        return await track.remember(together, [item(n, text)], hook=hook)

    results = await asyncio.gather(*(one(n, t) for n, t in enumerate(texts)))
    assert sorted(order) == list(range(len(texts)))
    serial = {}
    for n in order:
        serial[n] = await track.remember(alone, [item(n, texts[n])])
    assert [r[0].decision for r in results] == [serial[n][0].decision for n in range(len(texts))]
    await assert_same_vaults(services, together, alone)
    return [r[0].decision for r in results], together


async def test_sixteen_identical_posts_create_one_memory(api_services, admin_key, services) -> None:
    async with served(api_services) as url, httpx.AsyncClient(
            base_url=url, headers={"Authorization": f"Bearer {admin_key}"}, timeout=60) as http:
        assert (await http.post("/v1/vaults", json={"name": "alice"})).status_code == 201
        body = {"content": "My passport number ends in 4471", "said_at": "2026-03-09T10:00:00Z"}
        answers = await asyncio.gather(*(http.post("/v1/vaults/alice/memories", json=body) for _ in range(16)))
    assert [a.status_code for a in answers] == [200] * 16
    decisions = sorted(a.json()["results"][0]["decision"] for a in answers)
    assert decisions == ["CREATE"] + ["SKIP"] * 15
    assert len({a.json()["results"][0]["block_id"] for a in answers}) == 1
    n = await services.db.fetchone("SELECT count(*) AS n FROM memvault.block WHERE retracted_at IS NULL")
    assert n["n"] == 1


async def test_concurrent_supersedes_chain_as_one_at_a_time(services) -> None:
    """Two newer appointments sent at once: the second supersedes the first (not the old one a second time)."""
    texts = ["My dentist appointment is on Friday at 3pm", "My dentist appointment is on Monday at 10am",
             "My dentist appointment is on Tuesday at 9am"]
    decisions, together = await concurrently_then_serially(services, texts)
    assert decisions.count("CREATE") == 1 and decisions.count("SUPERSEDE") == 2, decisions
    current = await services.db.fetchall("SELECT content FROM memvault.block WHERE vault_id = %s "
                                         "AND invalid_at IS NULL AND retracted_at IS NULL", (together.id,))
    assert len(current) == 1, current


@settings(max_examples=8, deadline=None, suppress_health_check=FIXTURES)
@given(st.lists(st.sampled_from(TEXTS), min_size=3, max_size=7),
       st.lists(st.sampled_from([0.0, 0.0, 0.002, 0.01]), min_size=7, max_size=7))
async def test_concurrent_near_duplicates_end_as_one_at_a_time(services, texts, delays) -> None:
    await concurrently_then_serially(services, texts, delays)


async def test_sessions_appended_at_once_end_as_one_at_a_time(services, vault) -> None:
    """Turns of several sessions (repeating each other) appended at once: one chunk per distinct text where the
    one-at-a-time writes give one."""
    track = SessionTrack(services)
    said = T0
    turns = {f"s{n}": [TurnIn("user", "I moved to Lisbon in March and I love the tram 28", said)] for n in range(6)}
    results = await asyncio.gather(*(track.append_turns(vault, s, t) for s, t in turns.items()))
    decisions = sorted(r.chunks[0].decision for r in results)
    assert decisions == ["CREATE"] + ["SKIP"] * 5


class _Watch:
    """Counts the pool's connections in use whenever a model is called."""

    def __init__(self, services: Services) -> None:
        self.pool = services.db.pool
        self.busy: list[int] = []

    def look(self) -> None:
        stats = self.pool.get_stats()
        self.busy.append(stats["pool_size"] - stats["pool_available"])


class WatchedEmbedder(Embedder):
    def __init__(self, inner: Embedder, watch: _Watch) -> None:
        self.inner, self.watch = inner, watch
        self.name, self.dim = inner.name, inner.dim

    def _encode(self, texts: list[str], *, query: bool) -> np.ndarray:
        self.watch.look()
        return self.inner._encode(texts, query=query)


class WatchedLLM(LLM):
    def __init__(self, inner: LLM, watch: _Watch) -> None:
        self.inner, self.watch = inner, watch
        self.name = inner.name
        self.calls = 0

    async def run_traced(self, task, payload):
        self.watch.look()
        self.calls += 1
        return await self.inner.run_traced(task, payload)


def watched(services: Services) -> tuple[Services, _Watch, WatchedLLM]:
    watch = _Watch(services)
    llm = WatchedLLM(services.llm, watch)
    return Services(settings=services.settings, db=services.db, embedder=WatchedEmbedder(services.embedder, watch),
                    llm=llm, reranker=None, model_cache=services.model_cache), watch, llm


async def test_no_connection_is_held_while_a_model_works(services, vault) -> None:
    svc, watch, llm = watched(services)  # on the fixture's model pool: nothing of its own to close
    track = WriteTrack(svc)
    await track.remember(vault, [item(0, "I like green tea")])
    # The uncertain band: the LLM is asked (MERGE), then the merged text embedded, each with no transaction
    # open (this LLM is not ``instant``: it stands for a model-backed one).
    [merged] = await track.remember(vault, [item(1, "I like green tea, especially with jasmine")])
    assert merged.decision == "MERGE" and llm.calls == 1
    sessions = SessionTrack(svc)
    await sessions.append_turns(vault, "s9", [TurnIn("user", "We should ship the beta on Friday", T0),
                                              TurnIn("assistant", "Agreed, Friday it is", T0)])
    await sessions.close(vault, "s9")
    assert watch.busy and set(watch.busy) == {0}, watch.busy


async def test_an_instant_embedder_embeds_a_merge_in_place(services, vault, monkeypatch) -> None:
    """With an ``instant`` embedder (the default, in this process) a MERGE's new text is embedded under the lock:
    no rollback, no second transaction; the merged block's vector is the one the text embeds to, as when it is
    embedded outside (test_no_connection_is_held_while_a_model_works)."""
    from app.write.serial import ModelAnswers

    assert services.embedder.instant

    async def no_retry(self, need):
        raise AssertionError(f"rolled back to ask outside the lock: {need}")

    monkeypatch.setattr(ModelAnswers, "answer", no_retry)
    track = WriteTrack(services)
    await track.remember(vault, [item(0, "I like green tea")])
    [merged] = await track.remember(vault, [item(1, "I like green tea, especially with jasmine")])
    assert merged.decision == "MERGE"
    row = await services.db.fetchone("SELECT content, embedding FROM memvault.block WHERE id = %s",
                                     (merged.block_id,), vault_id=vault.id)
    [expected] = services.embedder.embed_documents([row["content"]])
    assert np.allclose(row["embedding"].to_numpy(), expected, atol=1e-6)


async def test_a_target_changed_meanwhile_is_decided_again(services, vault, monkeypatch) -> None:
    """A MERGE whose target a writer without the lock (an edit, a deletion) retracted between Dedup's read and
    the apply: the revision finds no such row, and the write decides again (a CREATE) instead of merging into
    nothing and answering MERGE."""
    track = services.write
    [first] = await track.remember(vault, [item(0, "I like green tea")])
    real_apply = WriteTrack.apply
    calls = itertools.count()

    async def apply_after_a_retraction(self, conn, v, prepared):
        if next(calls) == 0:
            async with await psycopg.AsyncConnection.connect(services.db.url, autocommit=True) as other:
                await other.execute("UPDATE memvault.block SET retracted_at = now() WHERE id = %s",
                                    (first.block_id,))
        return await real_apply(self, conn, v, prepared)

    monkeypatch.setattr(WriteTrack, "apply", apply_after_a_retraction)
    [again] = await track.remember(vault, [item(1, "I like green tea, especially with jasmine")])
    assert next(calls) == 2, "applied twice: the stale decision, then the new one"
    assert again.decision == "CREATE" and again.block_id != first.block_id
    n = await services.db.fetchone("SELECT count(*) AS n FROM memvault.block WHERE vault_id = %s "
                                   "AND retracted_at IS NULL", (vault.id,))
    assert n["n"] == 1


async def test_a_revision_of_a_changed_row_raises(services, vault) -> None:
    [b] = await services.write.remember(vault, [item(0, "I like green tea")])
    with pytest.raises(StaleWrite):
        async with services.db.transaction(vault.id) as conn:
            await conn.execute("SELECT memvault.revise_blocks_v1(%s, %s::jsonb, NULL)", (
                vault.id, f'[{{"action": "SUPERSEDE", "target": {b.block_id}, "block_id": {b.block_id}, '
                          '"expected": "I like coffee"}]'))


async def test_round_trips_of_one_write(services, vault, tmp_path) -> None:
    """One new memory: BEGIN + scope + lock + its block id + its candidates (the ids read after the candidates),
    then the apply (block, source, audit and the graph job, its id not read) with COMMIT, in one transaction.
    Before issue 33: 16 round trips in three transactions (the block id and the candidates each read in a
    transaction of their own); then 4 (the ids, the candidates, the graph job's id each read on their own)."""
    from tests.integration.test_read_unit_of_work import round_trips

    await services.write.remember(vault, [item(0, "I like green tea")])
    async with round_trips(services.db, tmp_path) as seen:
        [r] = await services.write.remember(vault, [item(1, "My dentist appointment is on Friday at 3pm")])
    assert r.decision == "CREATE"
    print(f"\nround trips per write: {sum(seen)} (per checkout: {seen})")
    assert seen == [2]


async def test_one_idempotency_key_sent_twice_at_once_writes_once(api_services, admin_key, services) -> None:
    """The second request waits for the vault's lock, finds the first one's answer stored, and returns it."""
    async with served(api_services) as url, httpx.AsyncClient(
            base_url=url, headers={"Authorization": f"Bearer {admin_key}"}, timeout=60) as http:
        assert (await http.post("/v1/vaults", json={"name": "alice"})).status_code == 201
        body = {"content": "My passport expires in June 2027"}
        headers = {"Idempotency-Key": "retry-123"}
        a, b = await asyncio.gather(*(http.post("/v1/vaults/alice/memories", json=body, headers=headers)
                                      for _ in range(2)))
        turns = {"turns": [{"role": "user", "content": "I moved to Lisbon in March"}]}
        c, d = await asyncio.gather(*(http.post("/v1/vaults/alice/sessions/s1/turns", json=turns,
                                                headers={"Idempotency-Key": "turns-1"}) for _ in range(2)))
    assert a.status_code == b.status_code == c.status_code == d.status_code == 200, (a.text, b.text, c.text, d.text)
    assert a.json() == b.json() and c.json() == d.json()
    n = await services.db.fetchone("SELECT count(*) AS n FROM memvault.block_source")
    assert n["n"] == 2, "one source for the memory, one for the turn's chunk"


async def test_an_import_and_api_writes_at_once_store_each_memory_once(api_services, services, monkeypatch) -> None:
    """The bulk path decides its batches under the same lock: memories imported while the API writes the same
    ones (each twice) leave each once (the import's in-memory copy of the vault learns the API's blocks at its next batch).
    Each apply waits 20 ms after its decision, so writes overlap whatever the machine's speed."""
    from app.write.bulk import BulkConfig, BulkIngest

    real_apply = WriteTrack.apply

    async def slow_apply(self, conn, v, prepared):
        await asyncio.sleep(0.02)
        return await real_apply(self, conn, v, prepared)

    monkeypatch.setattr(WriteTrack, "apply", slow_apply)

    facts = ["I live in Taipei", "My sister is a pediatric nurse in Boston", "I am allergic to peanuts",
             "Our wedding anniversary is on the 4th of June", "I drive a blue 2015 Honda Civic",
             "My favourite editor is Vim", "The team standup moved to 9:30 every weekday",
             "I am learning to play the cello"]
    vault = await create_vault(services.db, "alice")
    # The API's services: the pool holds several connections from the start, so the writers really overlap.
    bulk = BulkIngest(api_services, BulkConfig(batch_items=2, build_ann_index=False))
    imported, *written = await asyncio.gather(
        bulk.memories(vault, [item(n, t) for n, t in enumerate(facts)]),
        *(api_services.write.remember(vault, [item(n, t)]) for n, t in enumerate(facts) for _ in range(2)))
    decisions = [r.decision for r in imported] + [r[0].decision for r in written]
    assert decisions.count("CREATE") == len(facts) and decisions.count("SKIP") == 2 * len(facts), decisions
    rows = await services.db.fetchall("SELECT content FROM memvault.block WHERE vault_id = %s "
                                      "AND retracted_at IS NULL", (vault.id,))
    assert sorted(r["content"] for r in rows) == sorted(facts)
