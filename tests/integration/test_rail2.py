"""The second dense rail (app/read/rail2.py): the fill job, fast_search_v1's third rail, recall wiring."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import numpy as np
import pytest

from app.errors import ConfigError
from app.models.base import Embedder
from app.read import rail2
from app.read.config import ReadConfig, RecallOptions, ScoringConfig
from app.read.recall import ReadTrack
from app.read.context import RecallContext
from app.read.search import FastSearch
from app.vaults import create_vault, drop_vault
from app.write.items import WriteItem
from app.write.pipeline import WriteTrack

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)

MEMORIES = [
    "The garage door code is QX7, written on the back of the fuse box.",
    "I keep no secrets from my sister, we talk every Sunday.",
    "The Secret Santa gift exchange at work is on Friday.",
    "Lunch with the design team moved to Thursday at noon.",
    "My dentist appointment is on the ninth of June.",
]


class MarkerEmbedder(Embedder):
    """A model that knows one thing: texts naming QX7, and questions about a secret, point one way; the rest
    another. It records what it was asked to embed."""

    dim = 8
    name = "marker:v1"

    def __init__(self) -> None:
        self.seen: list[str] = []

    def _encode(self, texts: list[str], *, query: bool) -> np.ndarray:
        self.seen.extend(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            hit = ("secret" in t.lower()) if query else ("QX7" in t)
            out[i, 0 if hit else 1] = 1.0
            out[i, 2 + len(t) % 6] = 0.1  # ties broken by length, deterministically
        return out


async def _fill_vault(services, vault) -> list[int]:
    results = await WriteTrack(services).remember(vault, [WriteItem(m, T0) for m in MEMORIES])
    return [r.block_id for r in results]


async def _rows(services, vault) -> dict[int, dict]:
    rows = await services.db.fetchall("SELECT block_id, model, embedding::text AS e FROM memvault.block_rail2",
                                      vault_id=vault.id)
    return {int(r["block_id"]): r for r in rows}


async def test_fill_embeds_each_block_once_and_again_when_it_changes(services, vault) -> None:
    ids = await _fill_vault(services, vault)
    services.rail2 = MarkerEmbedder()
    report = await rail2.fill(services)
    assert report.embedded == len(MEMORIES) and report.vaults == 1 and report.done
    rows = await _rows(services, vault)
    assert set(rows) == set(ids) and {r["model"] for r in rows.values()} == {"marker:v1"}
    qx7 = ids[0]
    assert json.loads(rows[qx7]["e"])[0] == pytest.approx(1.0, abs=0.01)

    assert (await rail2.fill(services)).embedded == 0  # nothing due

    # A block whose content changed is due again; so is every block when the model changes.
    async with services.db.transaction() as conn:
        await conn.execute("UPDATE memvault.block SET content_hash = '\\x00'::bytea WHERE vault_id = %s AND id = %s",
                           (vault.id, ids[1]))
    services.rail2.seen.clear()
    assert (await rail2.fill(services, vault_id=vault.id)).embedded == 1
    assert services.rail2.seen == [MEMORIES[1]]
    services.rail2.name = "marker:v2"
    assert (await rail2.fill(services)).embedded == len(MEMORIES)


async def test_fill_stops_at_its_time_budget_and_resumes(services, vault) -> None:
    await _fill_vault(services, vault)
    services.rail2 = MarkerEmbedder()
    first = await rail2.fill(services, budget_s=0.0)
    assert first.embedded == 0 and not first.done
    assert (await rail2.fill(services)).embedded == len(MEMORIES)


async def test_fill_without_a_second_model_is_a_no_op(services, vault) -> None:
    await _fill_vault(services, vault)
    assert services.rail2 is None
    assert (await rail2.fill(services)).as_dict() == {"embedded": 0, "vaults": 0, "seconds": 0.0, "done": True}
    assert await _rows(services, vault) == {}
    assert await rail2.search_params(services, "the code") == {}


async def _fast_search(services, vault, query: str, cfg: dict) -> list[dict]:
    qvec = services.embedder.embed_query(query)
    async with services.db.transaction(vault.id) as conn:
        cur = await conn.execute("SELECT * FROM memvault.fast_search_v1(%s, %s, %s, NULL, %s::jsonb)",
                                 (qvec, query, T0, json.dumps(cfg)))
        return await cur.fetchall()


async def test_fast_search_fuses_the_third_rail_by_rrf(services, vault) -> None:
    ids = await _fill_vault(services, vault)
    services.rail2 = MarkerEmbedder()
    await rail2.fill(services)
    query = "Tell me the secret again."
    narrow = {"dense_n": 1, "sparse_n": 1, "exact": True, "dense_w": 0.5, "sparse_w": 1.0, "rrf_k": 60}
    off = await _fast_search(services, vault, query, narrow)
    assert ids[0] not in [r["id"] for r in off]  # the other two rails' top 1 is another block
    on = await _fast_search(services, vault, query, {**narrow, **await rail2.search_params(services, query)})
    by_id = {r["id"]: r for r in on}
    assert ids[0] in by_id  # brought in by the second rail alone
    assert by_id[ids[0]]["rrf"] == pytest.approx(0.5 / 61)
    assert by_id[ids[0]]["dense_rank"] is None and by_id[ids[0]]["sparse_rank"] is None
    for r in off:  # the others keep their fused score (the rail's top 1 is taken)
        assert by_id[r["id"]]["rrf"] == pytest.approx(r["rrf"])

    # In a large vault (exact: false) the rail only re-ranks the two first rails' candidates: no new block.
    large = await _fast_search(services, vault, query, {**narrow, **await rail2.search_params(services, query),
                                                       "exact": False})
    assert ids[0] not in [r["id"] for r in large]
    assert {r["id"] for r in large} == {r["id"] for r in off}
    assert sum(r["rrf"] for r in large) > sum(r["rrf"] for r in off)  # each got its rank on the third rail

    # Rows of another model are not searched; nor is the rail at weight 0.
    stale = {**narrow, **await rail2.search_params(services, query), "rail2_model": "marker:v0"}
    assert ids[0] not in [r["id"] for r in await _fast_search(services, vault, query, stale)]
    zero = {**narrow, **await rail2.search_params(services, query), "rail2_w": 0}
    assert ids[0] not in [r["id"] for r in await _fast_search(services, vault, query, zero)]


async def test_fast_search_keeps_blocks_not_yet_valid_off_the_third_rail(services, vault) -> None:
    ids = await _fill_vault(services, vault)
    services.rail2 = MarkerEmbedder()
    await rail2.fill(services)
    query = "the secret"
    cfg = {"dense_n": 1, "sparse_n": 0, "exact": True, **await rail2.search_params(services, query)}
    assert ids[0] in [r["id"] for r in await _fast_search(services, vault, query, cfg)]
    async with services.db.transaction() as conn:
        await conn.execute("UPDATE memvault.block SET valid_at = %s WHERE vault_id = %s AND id = %s",
                           (datetime(2030, 1, 1, tzinfo=UTC), vault.id, ids[0]))
    assert ids[0] not in [r["id"] for r in await _fast_search(services, vault, query, cfg)]


async def test_recall_embeds_the_query_with_the_second_model_and_ranks_by_it(services, vault) -> None:
    ids = await _fill_vault(services, vault)
    query = "Tell me the secret again."
    options = RecallOptions(k=5, thinking="slow", as_of=T0, use_prefetch=False, writeback=False)
    scoring = ScoringConfig()
    async with services.db.transaction(vault.id) as conn:
        ctx = RecallContext(query, vault=vault, qvec=services.embedder.embed_query(query), scoring=scoring,
                            as_of=T0, limit=10, conn=conn, thinking="slow")
        before = {c.id: c.base for c in await FastSearch(services)(ctx, [])}
    services.rail2 = MarkerEmbedder()
    await rail2.fill(services)
    services.rail2.seen.clear()
    async with services.db.transaction(vault.id) as conn:
        ctx = RecallContext(query, vault=vault, qvec=services.embedder.embed_query(query), scoring=scoring,
                            as_of=T0, limit=10, conn=conn, thinking="slow")
        after = {c.id: c.base for c in await FastSearch(services)(ctx, [])}
    assert services.rail2.seen == [query]
    gain = {i: after[i] - before[i] for i in before}
    assert max(gain, key=gain.get) == ids[0]  # rank 1 on the third rail gains most
    assert all(g > 0 for g in gain.values())  # a small vault: every block is on the rail
    result = await ReadTrack(services, ReadConfig()).recall(vault, query, options)
    assert ids[0] in [c.id for c in result.cards]


async def test_a_failing_second_model_leaves_recall_on_the_two_other_rails(services, vault) -> None:
    ids = await _fill_vault(services, vault)
    services.rail2 = MarkerEmbedder()
    await rail2.fill(services)

    def broken(text: str) -> np.ndarray:
        raise RuntimeError("model crashed")

    services.rail2.embed_query = broken
    services.rail2.embed_queries = broken  # the slow path's variants, embedded together
    assert await rail2.search_params(services, "the secret") == {}
    assert await rail2.search_params_many(services, ["the secret", "secret"]) == [{}, {}]
    options = RecallOptions(k=5, thinking="slow", as_of=T0, use_prefetch=False, writeback=False)
    result = await ReadTrack(services, ReadConfig()).recall(vault, "Where is the garage door code written?", options)
    assert result.cards and result.cards[0].id == ids[0]


async def test_dropping_a_vault_drops_its_rail(services) -> None:
    vault = await create_vault(services.db, "rail2-drop")
    await _fill_vault(services, vault)
    services.rail2 = MarkerEmbedder()
    await rail2.fill(services)
    await drop_vault(services.db, "rail2-drop")
    row = await services.db.fetchone("SELECT count(*) AS n FROM memvault.block_rail2")
    assert row["n"] == 0


async def test_the_worker_job_fills_the_rail(services, vault, db_url) -> None:
    from app.background.rail2 import embed_rail2
    from app.worker.app import app as jobs_app
    from app.worker.app import connector_for
    from app.worker.context import worker_context

    ids = await _fill_vault(services, vault)
    services.rail2 = MarkerEmbedder()
    with jobs_app.replace_connector(connector_for(db_url)) as worker_app:
        async with worker_app.open_async():
            await embed_rail2.configure(app=worker_app).defer_async(timestamp=0)
            await worker_app.run_worker_async(queues=["maintenance"], wait=False, install_signal_handlers=False,
                                                additional_context=worker_context(services))
    job = await services.db.fetchone("SELECT status FROM public.procrastinate_jobs WHERE task_name = 'embed_rail2'")
    assert job["status"] == "succeeded"
    assert set(await _rows(services, vault)) == set(ids)


def test_the_second_rail_is_on_by_default_on_the_slow_path_only(test_settings) -> None:
    from app.models.registry import ModelCache
    from app.settings import Settings

    assert Settings.model_fields["rail2_embedder"].default == "e5-onnx"
    search = ReadConfig().search
    assert (search.rail2_fast, search.rail2_slow, search.rail2_w) == (False, True, 0.5)
    assert search.rail2_on("slow") and not search.rail2_on("fast")
    default = test_settings.model_copy(update={"rail2_embedder": "e5-onnx"})
    default.__pydantic_fields_set__.discard("rail2_embedder")  # as when nothing sets MEMVAULT_RAIL2_EMBEDDER
    models = ModelCache(1)
    try:
        assert models.rail2_embedder(default).name.startswith("e5-onnx:")
        # e5-onnx chosen as the embedder itself: the default second rail turns itself off, an explicit one is an error
        assert models.rail2_embedder(default.model_copy(update={"embedder": "e5-onnx"})) is None
        with pytest.raises(ConfigError, match="the embedder itself"):
            models.rail2_embedder(default.model_copy(update={"embedder": "e5-onnx", "rail2_embedder": "e5-onnx"}))
    finally:
        models.close()


def test_the_second_model_comes_from_settings(test_settings) -> None:
    from app.models.registry import ModelCache

    models = ModelCache(1)
    assert models.rail2_embedder(test_settings.model_copy(update={"rail2_embedder": "none"})) is None
    hashed = models.rail2_embedder(test_settings.model_copy(update={"rail2_embedder": "hash",
                                                                    "embedder_hash_dim": 64}))
    assert hashed.name == "hash:v1-64"
    with pytest.raises(ConfigError, match="the embedder itself"):
        models.rail2_embedder(test_settings.model_copy(update={"rail2_embedder": "use"}))
    models.close()


def _cli(monkeypatch, db_url: str, **env: str) -> None:
    from app.settings import get_settings

    monkeypatch.setenv("MEMVAULT_DATABASE_URL", db_url)
    monkeypatch.setenv("MEMVAULT_EMBEDDER", "use")
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    get_settings.cache_clear()


async def test_the_command_fills_the_rail_and_says_so(services, vault, db_url, monkeypatch, capsys) -> None:
    import asyncio

    from app.cli import main
    from app.settings import get_settings

    ids = await _fill_vault(services, vault)
    _cli(monkeypatch, db_url, MEMVAULT_RAIL2_EMBEDDER="hash", MEMVAULT_EMBEDDER_HASH_DIM="64")
    try:
        code = await asyncio.to_thread(main, ["rail2", "--vault", vault.name])
    finally:
        get_settings.cache_clear()
    assert code == 0
    assert f"second rail (hash:v1-64): {len(ids)} blocks embedded in 1 vaults" in capsys.readouterr().out
    assert set(await _rows(services, vault)) == set(ids)


async def test_the_command_without_a_second_model_is_one_clear_error(db_url, monkeypatch, capsys) -> None:
    import asyncio

    from app.cli import main
    from app.settings import get_settings

    _cli(monkeypatch, db_url, MEMVAULT_RAIL2_EMBEDDER="none")
    try:
        code = await asyncio.to_thread(main, ["rail2"])
    finally:
        get_settings.cache_clear()
    assert code != 0
    assert "MEMVAULT_RAIL2_EMBEDDER" in capsys.readouterr().err


async def _recall(services, vault, query: str, thinking: str, search: dict | None = None):
    from dataclasses import replace

    config = ReadConfig()
    config = replace(config, search=replace(config.search, **(search or {})))
    options = RecallOptions(k=5, thinking=thinking, as_of=T0, use_prefetch=False, writeback=False)
    return await ReadTrack(services, config).recall(vault, query, options)


@pytest.mark.parametrize("search, fast_embeds, slow_embeds", [
    ({}, False, True),  # the default: the slow path only, so the fast path pays no second query embedding
    ({"rail2_fast": True}, True, True),
    ({"rail2_fast": True, "rail2_slow": False}, True, False),
    ({"rail2_fast": True, "rail2_w": 0.0}, False, False),
])
async def test_each_path_embeds_the_query_with_the_second_model_only_where_the_rail_runs(
        services, vault, search, fast_embeds, slow_embeds) -> None:
    await _fill_vault(services, vault)
    services.rail2 = MarkerEmbedder()
    await rail2.fill(services)
    query = "What did Maria say about the secret code?"
    for thinking, embeds in (("fast", fast_embeds), ("slow", slow_embeds)):
        services.rail2.seen.clear()
        result = await _recall(services, vault, query, thinking, search)
        assert result.cards
        assert (query in services.rail2.seen) is embeds, thinking
        if thinking == "slow" and embeds:  # the slow path's variants search the rail too
            assert len(services.rail2.seen) > 1
        if not embeds:
            assert services.rail2.seen == []


async def test_the_slow_path_searches_the_rail_with_its_variants_only_when_asked(services, vault) -> None:
    await _fill_vault(services, vault)
    services.rail2 = MarkerEmbedder()
    await rail2.fill(services)
    query = "What did Maria say about the secret code?"
    services.rail2.seen.clear()
    await _recall(services, vault, query, "slow")
    with_variants = list(services.rail2.seen)
    assert with_variants[0] == query and len(with_variants) > 1  # the question, then each variant
    one = await rail2.search_params_many(services, with_variants)  # the variants' vectors: one call, same vectors
    assert [p["qvec2"] for p in one] == [(await rail2.search_params(services, t))["qvec2"] for t in with_variants]
    services.rail2.seen.clear()
    result = await _recall(services, vault, query, "slow", {"rail2_variants": False})
    assert services.rail2.seen == [query] and result.cards


async def test_a_recall_before_the_worker_has_embedded_anything_ranks_as_without_the_rail(services, vault) -> None:
    ids = await _fill_vault(services, vault)
    query = "Where is the garage door code written?"
    both = {"rail2_fast": True}  # the rail on either path
    for thinking in ("fast", "slow"):
        services.rail2 = None
        without = await _recall(services, vault, query, thinking, both)
        services.rail2 = MarkerEmbedder()  # configured, but block_rail2 is empty: the job has not run yet
        before_fill = await _recall(services, vault, query, thinking, both)
        assert services.rail2.seen  # the rail was asked, and found nothing
        assert [c.id for c in before_fill.cards] == [c.id for c in without.cards]
        assert [c.score for c in before_fill.cards] == pytest.approx([c.score for c in without.cards])
        assert before_fill.cards[0].id == ids[0]
    # Part of the vault reached: the blocks the job has not embedded yet are still found by the two first rails.
    await rail2.fill(services)
    async with services.db.transaction() as conn:
        await conn.execute("DELETE FROM memvault.block_rail2 WHERE vault_id = %s AND block_id <> %s",
                           (vault.id, ids[0]))
    services.rail2.seen.clear()
    result = await _recall(services, vault, "Lunch with the design team moved to when?", "fast", both)
    assert services.rail2.seen and result.cards[0].id == ids[3]
    secret = await _recall(services, vault, "Tell me the secret again.", "fast", both)
    assert ids[0] in [c.id for c in secret.cards]


async def test_the_rail_reads_rail2_n_blocks(services, vault) -> None:
    ids = await _fill_vault(services, vault)
    services.rail2 = MarkerEmbedder()
    await rail2.fill(services)
    query = "Tell me the secret again."
    base = {"dense_n": 5, "sparse_n": 0, "exact": True, "dense_w": 0.5, "rrf_k": 60,
            **await rail2.search_params(services, query)}
    dense_only = {r["id"]: r["rrf"] for r in await _fast_search(services, vault, query, {**base, "rail2_w": 0})}
    for n, on_rail in ((0, 5), (1, 1), (3, 3)):  # 0: as many as the dense rail reads
        rows = {r["id"]: r["rrf"] for r in await _fast_search(services, vault, query, {**base, "rail2_n": n})}
        assert set(rows) == set(dense_only) == set(ids)
        assert sum(1 for i in rows if rows[i] > dense_only[i] + 1e-12) == on_rail, n
        assert rows[ids[0]] == pytest.approx(dense_only[ids[0]] + 0.5 / 61)  # the rail's first, whatever n


async def test_rail2_gather_puts_the_rail_on_the_fast_path_for_questions_that_gather_only(services, vault) -> None:
    await _fill_vault(services, vault)
    services.rail2 = MarkerEmbedder()
    await rail2.fill(services)
    many, one = "What secrets has Maria kept?", "What did Maria say about the secret code?"
    for query, search, embeds in ((many, {}, False), (many, {"rail2_gather": True}, True),
                                  (one, {"rail2_gather": True}, False)):
        services.rail2.seen.clear()
        result = await _recall(services, vault, query, "fast", search)
        assert result.cards
        assert services.rail2.seen == ([query] if embeds else []), (query, search)
    # the rail scores the gathering question's fast search: the memory the second model points at gains most
    off = await _recall(services, vault, many, "fast", {"rail2_w": 5.0})
    on = await _recall(services, vault, many, "fast", {"rail2_gather": True, "rail2_w": 5.0})
    before = {c.id: c.score for c in off.cards}
    gain = {c.id: c.score / before[c.id] for c in on.cards if c.id in before}
    assert "QX7" in next(c.text for c in on.cards if c.id == max(gain, key=gain.get))
    assert all(g > 1 for g in gain.values())  # a small vault: every block is on the rail
