"""Graph centrality for PPRBoost: PageRank (sparse, shared with cascade recall), the background scoring of blocks
from their vault's triples, the job, the command, and what recall's stage 7 makes of it."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from types import SimpleNamespace

import pytest

from app.background.centrality import GraphCentrality
from app.pagerank import pagerank
from app.write.graph import GraphBuild
from app.write.items import WriteItem
from app.write.pipeline import WriteTrack

FACTS = ["Alice works at Acme.", "Bob works at Acme.", "Carol works at Acme.", "Alice lives in Paris.",
         "Dave lives in Rome.", "Acme is based in Berlin."]


def test_pagerank_basics() -> None:
    assert pagerank([]) == {}
    pair = pagerank([(1, 2, 1.0)])
    assert pair == pytest.approx({1: 0.5, 2: 0.5})
    star = pagerank([(0, leaf, 1.0) for leaf in range(1, 6)])
    assert sum(star.values()) == pytest.approx(1.0)
    assert max(star, key=star.get) == 0 and star[1] == pytest.approx(star[5])
    # seeds personalize it: the walk restarts at leaf 5, so 5 outranks the other leaves (not the hub it feeds)
    seeded = pagerank([(0, leaf, 1.0) for leaf in range(1, 6)], {5: 1.0})
    assert seeded[5] > 2 * seeded[1] and seeded[0] > seeded[5]
    # a heavier edge carries more of the walk; self-loops are ignored
    weighted = pagerank([(0, 1, 3.0), (0, 2, 1.0), (2, 2, 5.0)])
    assert weighted[1] > weighted[2]


async def _vault_with_graph(services, vault) -> dict[str, int]:
    results = await WriteTrack(services).remember(vault, [
        WriteItem(content=t, said_at=datetime.now(UTC), source_kind="user") for t in FACTS])
    ids = {t: r.block_id for t, r in zip(FACTS, results, strict=True)}
    built = await GraphBuild(services).run(vault.id, list(ids.values()))
    assert built.triples == len(FACTS)
    return ids


async def _scores(services, vault) -> dict[int, float]:
    rows = await services.db.fetchall("SELECT id, ppr_score FROM memvault.block WHERE vault_id = %s",
                                      (vault.id,), vault_id=vault.id)
    return {r["id"]: r["ppr_score"] for r in rows}


async def test_blocks_are_scored_by_the_centrality_of_their_triples(services, vault) -> None:
    ids = await _vault_with_graph(services, vault)
    plain = (await WriteTrack(services).remember(vault, [
        WriteItem(content="The weather was lovely.", said_at=datetime.now(UTC), source_kind="user")]))[0].block_id
    [report] = await GraphCentrality(services.db).score_due()
    assert (report.entities, report.triples, report.blocks_changed) == (8, 6, 6)
    scores = await _scores(services, vault)
    # the hub (Acme) is in four triples; Alice's job joins the two most central entities
    assert scores[ids["Alice works at Acme."]] == pytest.approx(1.0)
    acme = [scores[ids[t]] for t in FACTS if "Acme" in t]
    assert min(acme) > scores[ids["Alice lives in Paris."]]
    assert all(0.0 < scores[i] <= 1.0 for i in ids.values())
    assert scores[plain] == 0.0  # evidence of nothing: PPRBoost leaves it alone
    state = await services.db.fetchone("SELECT triples, entities, blocks FROM memvault.graph_centrality_state "
                                       "WHERE vault_id = %s", (vault.id,), vault_id=vault.id)
    assert dict(state) == {"triples": 6, "entities": 8, "blocks": 6}
    # scoring changes no memory's version (ppr_score is not part of its history)
    versions = await services.db.fetchall("SELECT DISTINCT version FROM memvault.block WHERE vault_id = %s",
                                          (vault.id,), vault_id=vault.id)
    assert [r["version"] for r in versions] == [1]


async def test_only_changed_graphs_are_rescored(services, vault) -> None:
    ids = await _vault_with_graph(services, vault)
    gc = GraphCentrality(services.db)
    assert len(await gc.score_due()) == 1
    assert await gc.score_due() == []  # nothing changed
    # a triple invalidated (the fact no longer holds): due again, and its evidence block loses its score
    await services.db.fetchone("UPDATE memvault.triple SET invalid_at = now() WHERE vault_id = %s "
                               "AND evidence_block_id = %s RETURNING id", (vault.id, ids["Dave lives in Rome."]),
                               vault_id=vault.id)
    [report] = await gc.score_due()
    assert report.triples == 5
    assert (await _scores(services, vault))[ids["Dave lives in Rome."]] == 0.0
    # every triple gone: the vault is due once more, and every score returns to 0
    await services.db.fetchone("DELETE FROM memvault.triple WHERE vault_id = %s RETURNING 1", (vault.id,),
                               vault_id=vault.id)
    [report] = await gc.score_due()
    assert report.triples == 0 and set((await _scores(services, vault)).values()) == {0.0}
    assert await gc.score_due() == []


async def test_pprboost_lifts_the_central_memory_in_recall(services, vault) -> None:
    from app.read.config import RecallOptions
    from app.read.recall import recall

    ids = await _vault_with_graph(services, vault)
    opts = RecallOptions(format="cards", writeback=False, use_prefetch=False, thinking="fast")
    before = {c.id: c for c in (await recall(services, vault, "Who works at Acme?", opts)).cards}
    assert before[ids["Alice works at Acme."]].stages["PPRBoost"] == 1.0
    await GraphCentrality(services.db).score_due()
    after = {c.id: c for c in (await recall(services, vault, "Who works at Acme?", opts)).cards}
    assert after[ids["Alice works at Acme."]].stages["PPRBoost"] == pytest.approx(1.1)  # 1 + ppr_w x 1.0
    assert after[ids["Alice works at Acme."]].score > before[ids["Alice works at Acme."]].score


async def test_the_worker_job_and_the_command(services, vault, db_url, monkeypatch, capsys) -> None:
    from app.background.centrality import graph_centrality
    from app.cli import main
    from app.settings import get_settings
    from app.worker.context import worker_context

    await _vault_with_graph(services, vault)
    job = SimpleNamespace(additional_context=worker_context(services))  # what the worker hands the task
    [done] = await graph_centrality(job, timestamp=0)
    assert done["vault_id"] == str(vault.id) and done["blocks_changed"] == 6

    monkeypatch.setenv("MEMVAULT_DATABASE_URL", db_url)
    get_settings.cache_clear()
    try:
        assert await asyncio.to_thread(main, ["graph", "centrality", "--vault", vault.name]) == 0
    finally:
        get_settings.cache_clear()
    assert "no graph changed since it was last scored" in capsys.readouterr().out


@pytest.mark.parametrize("on", [False, True])
async def test_benchmarks_build_the_graph_only_when_asked(services, vault, on, monkeypatch) -> None:
    """``bench_graph`` (``MEMVAULT_BENCH_GRAPH``, a benchmark setting, not the service's): a benchmark's ingest also
    does what the worker's build_graph and graph_centrality jobs would; off, the graph stays empty (no worker runs
    during a benchmark)."""
    from app.importers.datasets import Session, Turn
    from app.bench.harness import IngestStats, ingest_sessions

    monkeypatch.setenv("MEMVAULT_BENCH_GRAPH", "1" if on else "0")
    sessions = [Session(id="s1", date=datetime(2026, 3, 1, tzinfo=UTC),
                        turns=tuple(Turn(role="user", content=t) for t in FACTS))]
    await ingest_sessions(services, vault, sessions, close=False, stats=IngestStats())
    triples = await services.db.fetchone("SELECT count(*) AS n FROM memvault.triple WHERE vault_id = %s",
                                         (vault.id,), vault_id=vault.id)
    scored = await services.db.fetchone("SELECT count(*) AS n FROM memvault.graph_centrality_state "
                                        "WHERE vault_id = %s", (vault.id,), vault_id=vault.id)
    assert (triples["n"] > 0, scored["n"]) == ((True, 1) if on else (False, 0))
