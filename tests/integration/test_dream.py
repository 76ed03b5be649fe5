"""The dream loop (seed 004): the dual gate and schedule, the five stages, temporal conflict resolution with the
right valid times (checked through recall with as_of), dry runs, a killed or failed run resumed without double
effect, the review queue's transitions and recalibration, and the routes' 4xx."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from app.background.dream import STAGES, DreamLoop
from app.write.graph import GraphBuild
from app.write.items import WriteItem
from app.write.pipeline import WriteTrack

OLD_AT = datetime(2026, 1, 10, 9, tzinfo=UTC)


@pytest.fixture(autouse=True)
async def _pool_ready(services) -> None:
    """A dream holds its lock connection while its stages take others. The test client serves requests outside the
    loop that opened the pool, where the pool cannot open more connections: open them first."""
    await services.db.pool.resize(min_size=4, max_size=services.db.pool.max_size)
    await services.db.pool.wait()
NEW_AT = datetime(2026, 6, 1, 9, tzinfo=UTC)


async def _moved(services, vault) -> tuple[int, int]:
    """Two facts months apart, drawn from two sessions: where the user lives, then where the user lives now, said
    with no change cue (the write track supersedes only on a cue such as "these days" or "moved to": without one it
    leaves the pair to the dream), the graph built as the worker does."""
    items = [WriteItem(content="I live in Boston with my cat.", said_at=OLD_AT, source_kind="user", kind="unit",
                       category="Fact", session_id="s-jan"),
             WriteItem(content="I live in Seattle, close to the lake.", said_at=NEW_AT,
                       source_kind="user", kind="unit", category="Fact", session_id="s-jun")]
    results = await WriteTrack(services).remember(vault, items)
    old, new = (r.block_id for r in results)
    await GraphBuild(services).run(vault.id, [old, new])
    return old, new


async def _block(services, vault, block_id: int) -> dict:
    return await services.db.fetchone("SELECT * FROM memvault.block WHERE vault_id = %s AND id = %s",
                                      (vault.id, block_id), vault_id=vault.id)


async def _recall_ids(client, vault, query: str, as_of: datetime | None = None) -> list[int]:
    body = {"query": query, "format": "json", "k": 10}
    if as_of is not None:
        body["as_of"] = as_of.isoformat()
    r = await client.post(f"/v1/vaults/{vault.name}/recall", json=body)
    assert r.status_code == 200, r.text
    return [c["id"] for c in r.json()["cards"]]


async def _audit(services, vault, action: str) -> int:
    row = await services.db.fetchone("SELECT count(*) AS n FROM memvault.audit_log WHERE vault_id = %s AND action = %s",
                                     (vault.id, action), vault_id=vault.id)
    return row["n"]


async def test_conflict_superseded_with_the_right_valid_times(client, services, vault) -> None:
    old, new = await _moved(services, vault)
    outcome = await DreamLoop(services).run(vault, force=True)
    run = outcome.run
    assert run["status"] == "done" and run["stage"] == "prune_and_report" and not outcome.resumed
    assert set(run["stats"]) == set(STAGES) and all(run["stats"][s]["ms"] >= 0 for s in STAGES)
    assert run["report"]["conflicts"]["found"]["slot"] == 1
    assert run["report"]["conflicts"]["resolved"]["SUPERSEDE"] == 1
    o, n = await _block(services, vault, old), await _block(services, vault, new)
    assert o["invalid_at"] == NEW_AT and o["superseded_by"] == new and o["retracted_at"] is None
    assert n["invalid_at"] is None
    # history keeps both: the old memory's version before the dream, and the new memory untouched
    versions = await services.db.fetchall("SELECT * FROM memvault.block_versions_v1(%s, %s)", (vault.id, old),
                                          vault_id=vault.id)
    assert [(v["version"], v["invalid_at"]) for v in versions] == [(2, NEW_AT), (1, None)]
    # the old triple ends when the new one starts; the audit says who did it
    assert await _audit(services, vault, "dream.supersede") == 1
    # recall: as of March the old fact, today the new one
    assert old in await _recall_ids(client, vault, "Where do I live?", as_of=datetime(2026, 3, 1, tzinfo=UTC))
    assert new not in await _recall_ids(client, vault, "Where do I live?", as_of=datetime(2026, 3, 1, tzinfo=UTC))
    now_ids = await _recall_ids(client, vault, "Where do I live?")
    assert new in now_ids and old not in now_ids
    # a second dream finds nothing new and changes nothing
    again = (await DreamLoop(services).run(vault, force=True)).run
    assert again["report"]["conflicts"]["found"] == {"slot": 0, "semantic": 0, "value": 0, "duplicate": 0}
    assert await _audit(services, vault, "dream.supersede") == 1


async def test_gate_dry_run_and_routes(client, services, vault) -> None:
    old, _ = await _moved(services, vault)
    r = await client.post(f"/v1/vaults/{vault.name}/dream")
    assert r.status_code == 409 and "sessions since (needs >= 5)" in r.json()["detail"] and "now=true" in r.json()["hint"]
    r = await client.post(f"/v1/vaults/{vault.name}/dream?dry_run=true&now=true")
    assert r.status_code == 200, r.text
    dry = r.json()
    assert dry["dry_run"] and dry["status"] == "done" and dry["report"]["conflicts"]["resolved"]["SUPERSEDE"] == 1
    assert (await _block(services, vault, old))["invalid_at"] is None  # nothing changed
    conflicts = (await client.get(f"/v1/vaults/{vault.name}/dream/conflicts")).json()
    assert conflicts == []  # the dry run's findings rolled back with it
    runs = (await client.get(f"/v1/vaults/{vault.name}/dream/runs")).json()
    assert [x["id"] for x in runs] == [dry["id"]]
    # the gate: five sessions since the vault was created, and the first dream opens it
    gate = (await client.get(f"/v1/vaults/{vault.name}/dream/schedule")).json()
    assert gate["timezone"] == "UTC" and gate["hour"] == 4 and gate["gate"]["sessions_since"] == 0
    # the schedule: a time zone and an hour, and 4xx that say what to fix
    r = await client.put(f"/v1/vaults/{vault.name}/dream/schedule", json={"timezone": "Asia/Taipei", "hour": 3})
    assert r.status_code == 200 and r.json() == {"timezone": "Asia/Taipei", "hour": 3}
    r = await client.put(f"/v1/vaults/{vault.name}/dream/schedule", json={"timezone": "Mars/Olympus", "hour": 3})
    assert r.status_code == 422 and "time zone" in r.json()["detail"]
    r = await client.put(f"/v1/vaults/{vault.name}/dream/schedule", json={"timezone": "UTC", "hour": 25})
    assert r.status_code == 422
    r = await client.get(f"/v1/vaults/{vault.name}/dream/runs?limit=0")
    assert r.status_code in (400, 422)
    r = await client.get(f"/v1/vaults/{vault.name}/dream/conflicts?status=bogus")
    assert r.status_code in (400, 422)
    r = await client.post("/v1/vaults/nope/dream?now=true")
    assert r.status_code == 404


async def test_due_vaults_follow_the_local_hour_and_the_dual_gate(client, services, vault) -> None:
    for i in range(5):
        r = await client.post(f"/v1/vaults/{vault.name}/sessions/s{i}/turns",
                              json={"turns": [{"role": "user", "content": f"Note {i} about the garden shed."}]})
        assert r.status_code in (200, 201), r.text
    await services.db.fetchone("SELECT * FROM memvault.set_dream_schedule_v1(%s, 'Asia/Taipei', 4)", (vault.id,))
    taipei_4am = datetime(2026, 11, 25, 20, 30, tzinfo=UTC)  # 04:30 in Taipei (UTC+8)
    due = await services.db.fetchall("SELECT * FROM memvault.dream_due_v1(%s)", (taipei_4am,))
    assert [r["name"] for r in due] == [vault.name] and due[0]["sessions_since"] == 5
    assert await services.db.fetchall("SELECT * FROM memvault.dream_due_v1(%s)", (taipei_4am - timedelta(hours=2),)) == []
    await DreamLoop(services).run(vault)  # the gate is open: no force needed
    # right after a dream the gate is closed (0 h, 0 sessions), a day later still closed (0 sessions)
    assert await services.db.fetchall("SELECT * FROM memvault.dream_due_v1(%s)", (taipei_4am,)) == []
    later = datetime.now(UTC) + timedelta(days=2)
    gate = await services.db.fetchone("SELECT * FROM memvault.dream_gate_v1(%s, %s)", (vault.id, later),
                                      vault_id=vault.id)
    assert gate["hours_since"] > 24 and gate["sessions_since"] == 0 and not gate["open"]


async def test_failed_run_resumes_after_its_last_stage_without_double_effect(services, vault, monkeypatch) -> None:
    old, new = await _moved(services, vault)

    async def broken(self, ctx, conn):
        raise RuntimeError("the model server went away")

    monkeypatch.setattr(DreamLoop, "_reflect", broken)
    with pytest.raises(RuntimeError):
        await DreamLoop(services).run(vault, force=True)
    runs = await services.db.fetchall("SELECT r FROM memvault.dream_runs_v1() r", vault_id=vault.id)
    failed = runs[0]["r"]
    assert failed["status"] == "failed" and failed["stage"] == "gather_signal" and "went away" in failed["error"]
    monkeypatch.undo()

    # killed in the middle of consolidate (the process dies: no error recorded, the stage's transaction lost)
    async def killed(self, ctx, conn):
        await conn.execute("UPDATE memvault.block SET content = 'half done' WHERE vault_id = %s AND id = %s",
                           (vault.id, old))
        raise asyncio.CancelledError()

    monkeypatch.setattr(DreamLoop, "_consolidate", killed)
    with pytest.raises(asyncio.CancelledError):
        await DreamLoop(services).run(vault, force=True)
    run = (await services.db.fetchall("SELECT r FROM memvault.dream_runs_v1() r", vault_id=vault.id))[0]["r"]
    assert run["id"] == failed["id"] and run["status"] == "running" and run["stage"] == "reflect"
    assert run["attempts"] == 2
    monkeypatch.undo()

    outcome = await DreamLoop(services).run(vault, force=True)
    assert outcome.resumed and outcome.run["id"] == failed["id"] and outcome.run["attempts"] == 3
    assert outcome.run["status"] == "done" and set(outcome.run["stats"]) == set(STAGES)
    o = await _block(services, vault, old)
    assert o["content"] == "I live in Boston with my cat." and o["superseded_by"] == new
    assert await _audit(services, vault, "dream.supersede") == 1
    conflicts = await services.db.fetchall("SELECT * FROM memvault.dream_conflict WHERE vault_id = %s",
                                           (vault.id,), vault_id=vault.id)
    assert [(c["old_block_id"], c["new_block_id"], c["status"]) for c in conflicts] == [(old, new, "applied")]
    # and a dream after it is a new run that finds nothing to do
    nxt = await DreamLoop(services).run(vault, force=True)
    assert not nxt.resumed and nxt.run["id"] != failed["id"]
    assert await _audit(services, vault, "dream.supersede") == 1


async def test_review_queue_transitions_and_recalibration(client, services, vault) -> None:
    old, new = await _moved(services, vault)
    # a stricter vault: nothing below 0.95 passes alone, so the verdict (0.9) is queued
    await services.db.fetchone("SELECT * FROM memvault.review_thresholds_v1('conflict', 0.95, 0.5)",
                               vault_id=vault.id)
    report = (await DreamLoop(services).run(vault, force=True)).run["report"]
    assert report["conflicts"]["queued"] == 1 and report["review_pending"] == 1
    assert (await _block(services, vault, old))["invalid_at"] is None
    items = (await client.get(f"/v1/vaults/{vault.name}/review?status=PENDING")).json()
    assert len(items) == 1 and items[0]["kind"] == "conflict" and items[0]["proposal"]["action"] == "SUPERSEDE"
    item = items[0]["id"]
    # claimed, then the claim lapses: back to PENDING, counted overdue, never dropped
    r = await client.post(f"/v1/vaults/{vault.name}/review/{item}/claim", json={"by": "ana", "hours": 1})
    assert r.status_code == 201 or r.status_code == 200, r.text
    assert r.json()["status"] == "CLAIMED"
    swept = await services.db.fetchone("SELECT memvault.review_sweep_v1(now() + interval '2 hours') AS n",
                                       vault_id=vault.id)
    assert swept["n"] == 1
    [back] = (await client.get(f"/v1/vaults/{vault.name}/review")).json()
    assert back["status"] == "PENDING" and back["overdue_count"] == 1 and back["claimed_by"] is None
    # approve: the change is committed, and the vault's rule moves toward the decision
    r = await client.post(f"/v1/vaults/{vault.name}/review/{item}/approve", json={"by": "ana", "note": "moved"})
    assert r.status_code in (200, 201), r.text
    assert r.json()["status"] == "APPROVED"
    o = await _block(services, vault, old)
    assert o["superseded_by"] == new and o["invalid_at"] == NEW_AT
    th = {t["kind"]: t for t in (await client.get(f"/v1/vaults/{vault.name}/review/thresholds")).json()}
    assert th["conflict"]["min_confidence"] < 0.95 and th["conflict"]["approved"] == 1
    # decided items cannot be decided again; unknown ones are 404; bad bodies 422
    r = await client.post(f"/v1/vaults/{vault.name}/review/{item}/reject", json={"by": "ana"})
    assert r.status_code == 409 and "already APPROVED" in r.json()["detail"]
    r = await client.post(f"/v1/vaults/{vault.name}/review/9999/approve", json={"by": "ana"})
    assert r.status_code == 404
    r = await client.post(f"/v1/vaults/{vault.name}/review/{item}/claim", json={"hours": -1})
    assert r.status_code == 422
    r = await client.get(f"/v1/vaults/{vault.name}/review?status=MAYBE")
    assert r.status_code in (400, 422)


async def test_rejected_conflict_keeps_both_and_lowers_the_bar_for_nothing(client, services, vault) -> None:
    old, new = await _moved(services, vault)
    await services.db.fetchone("SELECT * FROM memvault.review_thresholds_v1('conflict', 0.8, 0.05)",
                               vault_id=vault.id)  # everything is high impact here
    await DreamLoop(services).run(vault, force=True)
    [item] = (await client.get(f"/v1/vaults/{vault.name}/review")).json()
    assert "high impact" in item["reason"]
    r = await client.post(f"/v1/vaults/{vault.name}/review/{item['id']}/reject", json={"by": "bo"})
    assert r.status_code in (200, 201) and r.json()["status"] == "REJECTED"
    assert (await _block(services, vault, old))["invalid_at"] is None
    th = {t["kind"]: t for t in (await client.get(f"/v1/vaults/{vault.name}/review/thresholds")).json()}
    assert th["conflict"]["rejected"] == 1 and th["conflict"]["min_confidence"] > 0.8
    # the pair is not proposed again
    await DreamLoop(services).run(vault, force=True)
    assert len((await client.get(f"/v1/vaults/{vault.name}/review")).json()) == 1


async def test_reflect_fills_the_discovery_inbox_once(client, services, vault) -> None:
    texts = ["I practise the cello every morning before work.", "My cello teacher says my bowing improved.",
             "I bought new strings for the cello.", "Should I join the community orchestra?"]
    await WriteTrack(services).remember(vault, [WriteItem(content=t, said_at=datetime.now(UTC)) for t in texts])
    first = (await DreamLoop(services).run(vault, force=True)).run
    assert first["stats"]["reflect"]["memories"] == 4 and first["report"]["discoveries_added"] >= 2
    found = (await client.get(f"/v1/vaults/{vault.name}/discoveries")).json()
    kinds = {d["kind"] for d in found}
    assert {"insight", "knowledge_gap"} <= kinds
    assert any("cello" in d["title"].lower() for d in found if d["kind"] == "insight")
    # dismissed: kept, no longer listed; a second dream adds none of the same findings again
    r = await client.post(f"/v1/vaults/{vault.name}/discoveries/{found[0]['id']}/dismiss")
    assert r.status_code == 200 and r.json()["dismissed_at"] is not None
    assert len((await client.get(f"/v1/vaults/{vault.name}/discoveries")).json()) == len(found) - 1
    again = (await DreamLoop(services).run(vault, force=True)).run
    assert again["stats"]["reflect"]["added"] == 0
    r = await client.post(f"/v1/vaults/{vault.name}/discoveries/999999/dismiss")
    assert r.status_code == 404 and "GET /v1/vaults/{vault}/discoveries" in r.json()["hint"]
    r = await client.get(f"/v1/vaults/{vault.name}/discoveries?kind=rumour")
    assert r.status_code in (400, 422)
