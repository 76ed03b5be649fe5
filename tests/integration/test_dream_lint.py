"""Knowledge lint: structure rules and grounding in SQL, the judge's findings, and three-stage confirmation
(mark -> check -> commit) through the review queue for high-impact fixes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from app.background.dream import DreamLoop
from tests.integration.read_helpers import Mem, put_blocks


async def _triples(services, vault, rows: list[tuple[str, str, str, int | None]]) -> dict[str, int]:
    ids: dict[str, int] = {}
    async with services.db.transaction(vault.id) as conn:
        for name in sorted({x for s, _, o, _ in rows for x in (s, o)}):
            cur = await conn.execute("INSERT INTO memvault.entity (vault_id, name, canonical_key) VALUES (%s, %s, %s) "
                                     "RETURNING id", (vault.id, name, name.lower() or "_empty"))
            ids[name] = (await cur.fetchone())["id"]
        for i, (s, p, o, bid) in enumerate(rows):
            cur = await conn.execute(
                "INSERT INTO memvault.triple (vault_id, subject_id, predicate, object_id, evidence_block_id, confidence,"
                " valid_at, recorded_at) VALUES (%s, %s, %s, %s, %s, 0.9, now() - interval '2 days', "
                "now() - make_interval(mins => %s)) RETURNING id", (vault.id, ids[s], p, ids[o], bid, 100 - i))
            ids[f"t{i}"] = (await cur.fetchone())["id"]
    return ids


async def _findings(client, vault, **params) -> list[dict]:
    r = await client.get(f"/v1/vaults/{vault.name}/lint", params=params)
    assert r.status_code == 200, r.text
    return r.json()


async def test_lint_levels_and_confirmation(client, services, vault) -> None:
    gone, kept, stale = await put_blocks(services, vault, [
        Mem("Ana works at Acme."), Mem("Ana lives in Paris.", access_count=40),
        Mem("Tomorrow I have the dentist at 9.", days_ago=90)])
    async with services.db.transaction(vault.id) as conn:
        await conn.execute("UPDATE memvault.block SET retracted_at = now() WHERE vault_id = %s AND id = %s",
                           (vault.id, gone))
    ids = await _triples(services, vault, [
        ("Ana", "works_at", "Acme", gone),          # t0: its memory was retracted -> dangling_evidence
        ("Ana", "lives_in", "Paris", kept),         # t1: fine
        ("Paris", "works_at", "Ana", kept),         # t2: Paris is a place -> domain_mismatch; Ana a person -> range
        ("Bob", "is_a", "Carl", None),              # t3, t4: a two-cycle of is_a -> the newer is a cycle finding
        ("Carl", "is_a", "Bob", None),
        ("Dora", "Likes 2 Much!", "Eve", None),     # t5: malformed predicate (normalizing folds it to likes_2_much!, still not snake_case)
        ("Ana", "befriends", "Bob", None),          # t6: unknown predicate
        ("Bob", "lives_in", "Paris", None),         # t7, t8: Paris is mostly a place
        ("Carl", "visited", "Paris", None),
    ])
    run = (await DreamLoop(services).run(vault, force=True)).run
    lint = run["stats"]["consolidate"]["lint"]
    assert {"dangling_evidence", "malformed_triple", "cycle", "domain_mismatch", "unknown_predicate"} <= set(lint["found"])
    found = {(f["rule"], f["key"]): f for f in await _findings(client, vault)}
    assert found[("dangling_evidence", str(ids["t0"]))]["status"] == "fixed"  # sure and low impact: committed
    assert found[("malformed_triple", str(ids["t5"]))]["status"] == "fixed"
    assert found[("unknown_predicate", "befriends")]["fix"] is None
    assert found[("domain_mismatch", str(ids["t2"]))]["level"] == "grounding"
    cycle = found[("cycle", str(ids["t4"]))]
    assert cycle["status"] == "queued"  # a cycle's fix is not sure: marked, waiting for a person
    assert ("judge_stale", str(stale)) in found and found[("judge_stale", str(stale))]["level"] == "judge"
    triples = {r["id"]: r for r in await services.db.fetchall(
        "SELECT id, invalid_at FROM memvault.triple WHERE vault_id = %s", (vault.id,), vault_id=vault.id)}
    assert triples[ids["t0"]]["invalid_at"] is not None and triples[ids["t1"]]["invalid_at"] is None
    assert triples[ids["t4"]]["invalid_at"] is None
    # check + commit: the person approves, the finding still holds, its fix is applied
    [item] = [q for q in (await client.get(f"/v1/vaults/{vault.name}/review?kind=lint")).json()
              if q["ref_id"] == cycle["id"]]
    r = await client.post(f"/v1/vaults/{vault.name}/review/{item['id']}/approve", json={"by": "ana"})
    assert r.status_code in (200, 201), r.text
    after = {(f["rule"], f["key"]): f for f in await _findings(client, vault)}
    assert after[("cycle", str(ids["t4"]))]["status"] == "fixed"
    t4 = await services.db.fetchone("SELECT invalid_at FROM memvault.triple WHERE vault_id = %s AND id = %s",
                                    (vault.id, ids["t4"]), vault_id=vault.id)
    assert t4["invalid_at"] is not None
    # a second dream reports no structural finding twice and fixes nothing new (the fixes above may change an
    # entity's type, so grounding can see something new)
    again = (await DreamLoop(services).run(vault, force=True)).run["stats"]["consolidate"]["lint"]
    assert set(again["found"]) <= {"domain_mismatch", "range_mismatch"} and again["fixed"] == 0
    r = await client.get(f"/v1/vaults/{vault.name}/lint?status=maybe")
    assert r.status_code in (400, 422)


async def test_a_queued_finding_that_no_longer_holds_is_dismissed_on_check(client, services, vault) -> None:
    ids = await _triples(services, vault, [("Bob", "is_a", "Carl", None), ("Carl", "is_a", "Bob", None)])
    await DreamLoop(services).run(vault, force=True)
    [item] = (await client.get(f"/v1/vaults/{vault.name}/review?kind=lint")).json()
    async with services.db.transaction(vault.id) as conn:  # someone fixed it by hand meanwhile
        await conn.execute("UPDATE memvault.triple SET invalid_at = now() WHERE vault_id = %s AND id = %s",
                           (vault.id, ids["t1"]))
    r = await client.post(f"/v1/vaults/{vault.name}/review/{item['id']}/approve", json={"by": "ana"})
    assert r.status_code in (200, 201)
    [f] = [f for f in await _findings(client, vault) if f["rule"] == "cycle"]
    assert f["status"] == "dismissed"
