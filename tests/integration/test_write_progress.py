"""Concurrent writes to one vault always make progress with a slow model (issue 33, item 1; app/write/serial.py).

A write decides under its vault's write lock on the model answers it holds; a MERGE's new text needs a vector,
which a non-``instant`` embedder (e5-onnx, an HTTP server) gives only outside the lock. With several writers of
one vault merging into the same blocks, each retry found its target merged by another writer meanwhile (a new
merged text, a new vector to get): the writes starved each other until one gave up with a 409 after 8 tries
(docs/read-track-log.md round 11: ``bench ingest --in-flight 4`` with e5-onnx). A write now asks the models
under the lock on its last tries, so every write a client sends correctly succeeds."""

from __future__ import annotations

import asyncio
import itertools
import time
from datetime import UTC, datetime, timedelta

import httpx
import numpy as np
import psycopg

from app.models.base import Embedder
from app.services import Services
from app.vaults import create_vault
from app.write import serial
from app.write.items import WriteItem
from app.write.pipeline import WriteTrack
from tests.integration.served import served
from tests.integration.test_write_batch import assert_same_vaults

T0 = datetime(2026, 3, 9, 12, 0, tzinfo=UTC)
_names = itertools.count()
WRITERS = 16

# Two facts, each said sixteen ways with the same content words in different sentences: under the heuristic LLM
# a variant merges into its fact's block (the subset rule) and appends its sentence, so every merge changes the
# text the next merge into that block makes, and the vector it needs.
FACTS = [
    ["I like green tea and I drink green tea every morning.",
     "Every morning I drink green tea, which I like.",
     "I drink green tea every morning because I like it.",
     "Green tea is what I like to drink every morning.",
     "I like to drink green tea every morning.",
     "Every morning, green tea: I like to drink it.",
     "Drinking green tea every morning is something I like.",
     "I like green tea; I drink it every morning.",
     "Green tea every morning: I like to drink it.",
     "What I like to drink every morning is green tea.",
     "I drink green tea every morning, and I like it.",
     "Every single morning I drink green tea because I like it.",
     "I like drinking green tea every morning.",
     "Every morning I like to drink a green tea.",
     "My drink every morning is green tea, which I like.",
     "I do like to drink green tea every morning."],
    ["I walk my dog Rex in the park every evening.",
     "Every evening I walk Rex, my dog, in the park.",
     "In the park every evening I walk my dog Rex.",
     "My dog Rex and I walk in the park every evening.",
     "Rex, my dog, gets a walk in the park every evening.",
     "Every evening, the park: I walk my dog Rex there.",
     "I take my dog Rex for a walk in the park every evening.",
     "Every evening my dog Rex and I walk in the park.",
     "The park is where I walk my dog Rex every evening.",
     "I walk Rex, my dog, every evening in the park.",
     "My dog Rex gets walked in the park every evening.",
     "Every evening I take Rex, my dog, to walk in the park.",
     "In the park, every evening, I walk Rex my dog.",
     "Rex is my dog and I walk him in the park every evening.",
     "I walk my dog Rex every evening, in the park.",
     "Each evening I walk my dog Rex in the park."],
]


class SlowEmbedder(Embedder):
    """The offline default model, slowed by ``seconds`` a call (in the model pool's threads, as a remote model's
    I/O or e5's compute would be) and not ``instant``: it stands for a model-backed embedder."""

    instant = False

    def __init__(self, inner: Embedder, seconds: float) -> None:
        self.inner, self.seconds = inner, seconds
        self.name, self.dim = inner.name, inner.dim
        self.calls = 0

    def _encode(self, texts: list[str], *, query: bool) -> np.ndarray:
        self.calls += 1
        time.sleep(self.seconds)
        return self.inner._encode(texts, query=query)


def slow(services: Services, seconds: float) -> Services:
    """``services`` with the slow embedder, on the same pool and model threads (nothing of its own to close)."""
    return Services(settings=services.settings, db=services.db, embedder=SlowEmbedder(services.embedder, seconds),
                    llm=services.llm, reranker=None, model_cache=services.model_cache)


def item(n: int, text: str) -> WriteItem:
    """The n-th write: its own valid time, so which of two facts is newer does not depend on arrival."""
    return WriteItem(content=text, said_at=T0 + timedelta(minutes=n), session_id="s1", source_kind="user")


async def test_concurrent_merges_with_a_slow_embedder_all_succeed(services) -> None:
    """Sixteen writers of one vault, each writing one variant of every fact in turn (32 writes, most of them
    MERGEs into two blocks), with an embedder that takes 40 ms a call: every write succeeds, and the vault ends
    as the same writes one at a time in the order they committed."""
    svc = slow(services, 0.04)
    track = WriteTrack(svc)
    together = await create_vault(services.db, f"together-{next(_names)}")
    alone = await create_vault(services.db, f"alone-{next(_names)}")
    writes = {(w, f): item(f * WRITERS + w, FACTS[f][w]) for w in range(WRITERS) for f in range(len(FACTS))}
    order: list[tuple[int, int]] = []

    async def writer(w: int) -> dict:
        results = {}
        for f in range(len(FACTS)):
            async def hook(conn: psycopg.AsyncConnection, _results, key=(w, f)) -> None:  # under the lock
                order.append(key)

            [results[w, f]] = await track.remember(together, [writes[w, f]], hook=hook)
        return results

    done = await asyncio.gather(*(writer(w) for w in range(WRITERS)), return_exceptions=True)
    failed = [d for d in done if isinstance(d, BaseException)]
    assert not failed, failed  # before: Conflict("the vault changed under this write 8 times ...")
    together_results = {k: r for d in done for k, r in d.items()}
    assert sorted(order) == sorted(writes)
    alone_results = {}
    for key in order:  # the writes one at a time, in the order the concurrent ones committed
        [alone_results[key]] = await services.write.remember(alone, [writes[key]])
    decisions = [together_results[k].decision for k in order]
    assert decisions == [alone_results[k].decision for k in order]
    assert decisions.count("MERGE") >= 16, decisions  # 28 of 32 in every run seen
    await assert_same_vaults(services, together, alone)


async def test_the_last_tries_ask_the_model_under_the_lock(services, vault) -> None:
    """A write whose merged text changes at every try (as when other writers keep merging into its target):
    the optimistic tries roll back to embed outside the lock, then one asks the embedder while it holds the
    lock (seen from another connection) and commits. Counts: one transaction per try, one embedding per try."""
    svc = slow(services, 0.0)
    track = WriteTrack(svc)
    answers = serial.ModelAnswers(track.dedup, track._embed, instant_embed=svc.embedder.instant)
    tries: list[bool] = []  # per transaction: was the embedder asked while this write held the vault's lock
    inside = False

    # Another connection cannot take the vault's write lock (memvault.lock_vault_writes_v1's key) while the
    # write holds it; autocommit: taken, if it is, only for that statement.
    try_lock = ("SELECT pg_try_advisory_xact_lock(hashtext('memvault.write'), hashtext(%s::text))")
    real_embed = answers.embed

    async def embed(texts: list[str]) -> np.ndarray:
        if inside:
            async with await psycopg.AsyncConnection.connect(services.db.url, autocommit=True) as other:
                [free] = await (await other.execute(try_lock, (vault.id,))).fetchone()
            tries[-1] = not free
        return await real_embed(texts)

    answers.embed = embed

    async def work(conn: psycopg.AsyncConnection) -> str:
        nonlocal inside
        tries.append(False)
        inside = True
        try:  # a new text each try: the answer got outside never serves the next try
            await answers.vector(f"I like green tea, try {len(tries)}")
        finally:
            inside = False
        return "done"

    assert await serial.locked_write(services.db, vault.id, answers, work) == "done"
    assert len(tries) == serial.OPTIMISTIC + 1
    assert tries == [False] * serial.OPTIMISTIC + [True]
    assert answers.asked == serial.OPTIMISTIC + 1  # each optimistic try's text outside, the last one's inside
    assert svc.embedder.calls == serial.OPTIMISTIC + 1


async def test_a_target_edited_at_every_try_answers_a_clear_409(api_services, admin_key, services,
                                                                monkeypatch) -> None:
    """The one cause the lock cannot rule out: a writer that takes no lock (an edit, the dream) changes the block a
    MERGE targets between every try's read and its apply. After ATTEMPTS tries the API answers 409 naming that
    cause, with nothing written."""
    real_apply = WriteTrack.apply
    applies = itertools.count()

    def edited(n: int) -> str:  # the same words (the new text still merges into it), another text each time
        return "I like green tea" + "!" * (n + 1)

    async def apply_after_an_edit(self, conn, v, prepared):
        n = next(applies)
        async with await psycopg.AsyncConnection.connect(services.db.url, autocommit=True) as other:
            await other.execute("UPDATE memvault.block SET content = %s WHERE vault_id = %s AND content LIKE %s",
                                (edited(n), v.id, "I like green tea%"))
        return await real_apply(self, conn, v, prepared)

    async with served(api_services) as url, httpx.AsyncClient(
            base_url=url, headers={"Authorization": f"Bearer {admin_key}"}, timeout=60) as http:
        assert (await http.post("/v1/vaults", json={"name": "alice"})).status_code == 201
        first = await http.post("/v1/vaults/alice/memories", json={"content": "I like green tea"})
        assert first.status_code == 200 and first.json()["results"][0]["decision"] == "CREATE"
        monkeypatch.setattr(WriteTrack, "apply", apply_after_an_edit)
        answer = await http.post("/v1/vaults/alice/memories",
                                 json={"content": "I like green tea, especially with jasmine"})
    assert answer.status_code == 409, answer.text
    body = answer.json()
    assert body["error"] == "Conflict"
    assert body["detail"] == ("the memories this write would merge into or supersede were changed by other writers "
                              "that do not wait for it (an edit, a deletion, the dream loop) at 8 of its 8 tries")
    assert body["hint"] == "nothing was written; send it again"
    assert next(applies) == serial.ATTEMPTS
    rows = await services.db.fetchall("SELECT content FROM memvault.block WHERE retracted_at IS NULL")
    assert [r["content"] for r in rows] == [edited(serial.ATTEMPTS - 1)]
