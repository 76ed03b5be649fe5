"""The dream's graph signals: multi-signal edge weights, Leiden communities on a planted structure (two dense
clusters joined by one edge), their summaries, and GLOBAL cascade recall over them."""

from __future__ import annotations

import json
from itertools import combinations

import pytest

from app.background.communities import leiden
from app.background.dream import DreamLoop
from app.read.cascade import CascadeRecall
from app.read.config import LayerPlan, ReadConfig, ScoringConfig
from app.read.context import RecallContext
from tests.integration.read_helpers import Mem, put_blocks

GARDEN = ["Tomatoes", "Basil", "Compost", "Greenhouse", "Trowel"]
BAND = ["Guitar", "Drums", "Rehearsal", "Setlist", "Amplifier"]


async def _planted(services, vault) -> tuple[dict[str, int], dict[tuple[str, str], int]]:
    """Every pair inside each cluster linked by a triple with its own memory (garden talk in one session, band
    talk in another), and one bridge: Trowel - Guitar."""
    pairs = [(a, b, "garden") for a, b in combinations(GARDEN, 2)] + \
            [(a, b, "band") for a, b in combinations(BAND, 2)] + [("Trowel", "Guitar", "garden")]
    block_ids = await put_blocks(services, vault, [Mem(f"{a} goes with {b} in my {s} notes.", session_id=s)
                                                   for a, b, s in pairs])
    ids: dict[str, int] = {}
    async with services.db.transaction(vault.id) as conn:
        for name in GARDEN + BAND:
            cur = await conn.execute("INSERT INTO memvault.entity (vault_id, name, canonical_key, embedding) "
                                     "VALUES (%s, %s, %s, %s) RETURNING id",
                                     (vault.id, name, name.lower(), services.embedder.embed_documents([name])[0]))
            ids[name] = (await cur.fetchone())["id"]
        edges = []
        for (a, b, _), bid in zip(pairs, block_ids, strict=True):
            cur = await conn.execute(
                "INSERT INTO memvault.triple (vault_id, subject_id, predicate, object_id, evidence_block_id, "
                "confidence, valid_at) VALUES (%s, %s, 'uses', %s, %s, 0.9, now() - interval '1 day') RETURNING id",
                (vault.id, ids[a], ids[b], bid))
            edges.append({"s": ids[a], "o": ids[b], "p": "uses", "t": (await cur.fetchone())["id"], "b": bid})
        await conn.execute("SELECT memvault.graph_add_v1(%s, %s::jsonb, %s::jsonb)", (
            vault.id, json.dumps([{"id": i, "name": n} for n, i in ids.items()]), json.dumps(edges)))
    return ids, {(a, b): bid for (a, b, _), bid in zip(pairs, block_ids, strict=True)}


def test_leiden_finds_two_planted_clusters() -> None:
    edges = [(a, b, 1.0) for a, b in combinations(range(5), 2)] + \
            [(a, b, 1.0) for a, b in combinations(range(5, 10), 2)] + [(4, 5, 0.5)]
    [p] = leiden(edges, (1.0,), seed=42, min_size=2)
    assert sorted(map(sorted, p.communities)) == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]
    assert leiden([], (0.5, 1.0), seed=1, min_size=2)[1].communities == []


async def test_dream_finds_the_planted_communities_and_global_recall_reads_them(services, vault) -> None:
    ids, blocks = await _planted(services, vault)
    run = (await DreamLoop(services).run(vault, force=True)).run
    edges = run["stats"]["gather_signal"]["edges"]
    assert edges["pairs"] >= 21 and edges["kept"] >= 21  # 10 + 10 in the clusters, the bridge
    weights = {(r["a_id"], r["b_id"]): r for r in await services.db.fetchall(
        "SELECT * FROM memvault.edge_weight WHERE vault_id = %s", (vault.id,), vault_id=vault.id)}
    inside = weights[tuple(sorted((ids["Tomatoes"], ids["Basil"])))]
    bridge = weights[tuple(sorted((ids["Trowel"], ids["Guitar"])))]
    assert inside["co_occurrence"] == 1 and inside["session_jaccard"] == 1.0 and inside["adamic_adar_norm"] > 0
    assert bridge["session_jaccard"] < 1.0 and bridge["adamic_adar_norm"] == 0 and inside["weight"] > bridge["weight"]
    expected = (0.25 * inside["co_occ_log"] + 0.20 * inside["session_jaccard"] + 0.20 * inside["adamic_adar_norm"]
                + 0.15 * inside["type_affinity"] + 0.20 * inside["semantic_cosine"])
    assert inside["weight"] == pytest.approx(expected, abs=1e-5)
    # Leiden at the default resolution: the two clusters
    comms = await services.db.fetchall("SELECT * FROM memvault.communities_v1(1.0)", vault_id=vault.id)
    assert sorted(sorted(c["members"]) for c in comms) == [sorted(BAND), sorted(GARDEN)]
    assert run["report"]["communities"]["1.0"] == [5, 5] and set(run["report"]["communities"]) == {"0.5", "1.0", "2.0"}
    assert all(c["summary"] for c in comms) and run["report"]["community_summaries"] == 2
    # GLOBAL: a question naming a garden entity brings the garden cluster's memories, none of the band's
    q = "What do I know about Basil?"
    async with services.db.transaction(vault.id) as conn:
        ctx = RecallContext(query=q, vault=vault, qvec=services.embedder.embed_query(q), scoring=ScoringConfig(),
                            plan=LayerPlan(communities=True), services=services, config=ReadConfig(), conn=conn,
                            stage="cascade")
        await CascadeRecall(services, ReadConfig())(ctx, [])
    cands, events = ctx.found["cascade"], ctx.events
    member_ids = {c.id for c in cands if c.origin == "community"}
    garden_blocks = {b for (a, _), b in blocks.items() if a in GARDEN}
    band_blocks = {b for (a, _), b in blocks.items() if a in BAND}
    assert member_ids and member_ids <= garden_blocks and not member_ids & band_blocks
    assert any(c.kind == "summary" and c.id < 0 for c in cands)
    ev = [e for e in events if e.get("mode") == "GLOBAL"][0]
    assert ev["members"] == len(member_ids) and ev["summaries"] == 2
    # a second dream replaces the communities, it does not add to them
    await DreamLoop(services).run(vault, force=True)
    assert len(await services.db.fetchall("SELECT * FROM memvault.communities_v1(1.0)", vault_id=vault.id)) == 2


async def test_surprise_discovery_on_the_planted_structure(client, services, vault) -> None:
    ids, blocks = await _planted(services, vault)
    # the bridge said again and again: a strong link between the two communities
    extra = await put_blocks(services, vault, [Mem(f"Trowel and Guitar again, take {i}.", session_id="band")
                                               for i in range(3)])
    async with services.db.transaction(vault.id) as conn:
        for bid in extra:
            await conn.execute("INSERT INTO memvault.triple (vault_id, subject_id, predicate, object_id, "
                               "evidence_block_id, confidence, valid_at) VALUES (%s, %s, 'uses', %s, %s, 0.9, now())",
                               (vault.id, ids["Trowel"], ids["Guitar"], bid))
    run = (await DreamLoop(services).run(vault, force=True)).run
    found = (await client.get(f"/v1/vaults/{vault.name}/discoveries")).json()
    kinds = {d["kind"] for d in found}
    assert "cross_community" in kinds, found
    cross = [d for d in found if d["kind"] == "cross_community"]
    assert {cross[0]["detail"]["a"], cross[0]["detail"]["b"]} == {"Trowel", "Guitar"}
    assert run["stats"]["gather_signal"]["discoveries"]["added"] == len(
        [d for d in found if d["kind"] in ("cross_community", "indirect_strong", "knowledge_gap")
         and d["detail"].get("source") != "reflect"])
    # a second dream adds none of them again
    again = (await DreamLoop(services).run(vault, force=True)).run
    assert again["stats"]["gather_signal"]["discoveries"]["added"] == 0


async def test_indirect_strong_two_steps_apart_through_many_paths(client, services, vault) -> None:
    """Ada and Cleo never appear together, but four of Ada's projects are Cleo's too."""
    names = ["Ada", "Cleo", "Atlas", "Beacon", "Comet", "Dune", "Ember"]
    pairs = [("Ada", p) for p in names[2:6]] + [("Cleo", p) for p in names[2:6]] + [("Ada", "Ember")]
    block_ids = await put_blocks(services, vault, [Mem(f"{a} works on {b}.", session_id=f"s{i}")
                                                   for i, (a, b) in enumerate(pairs)])
    async with services.db.transaction(vault.id) as conn:
        ids = {}
        for n in names:
            cur = await conn.execute("INSERT INTO memvault.entity (vault_id, name, canonical_key) VALUES (%s, %s, %s) "
                                     "RETURNING id", (vault.id, n, n.lower()))
            ids[n] = (await cur.fetchone())["id"]
        for (a, b), bid in zip(pairs, block_ids, strict=True):
            await conn.execute("INSERT INTO memvault.triple (vault_id, subject_id, predicate, object_id, "
                               "evidence_block_id, confidence, valid_at) VALUES (%s, %s, 'uses', %s, %s, 0.9, now())",
                               (vault.id, ids[a], ids[b], bid))
    await DreamLoop(services).run(vault, force=True)
    found = (await client.get(f"/v1/vaults/{vault.name}/discoveries?kind=indirect_strong")).json()
    pairs_found = {frozenset((d["detail"]["source"], d["detail"]["target"])) for d in found}
    assert frozenset(("Ada", "Cleo")) in pairs_found
    assert all(len(p) == 2 for p in pairs_found)
