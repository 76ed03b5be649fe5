"""A vault left running with its nightly dream, on a simulated clock: a week of conversations through the REST API,
one dream each night at 04:00 behind the dual gate, then a month and half a year with nobody talking. At the end
the vault has consolidated, not just accumulated: a restated fact is stored once, an update supersedes the old
value (history and ``as_of`` keep it), each night leaves its snapshot, unused memories cool down to digests while
the one in use stays warm, and the memory people voted down is pruned.

The dream reads the simulated time through ``DreamLoop.run(now=...)`` (the gate, the snapshot's day, tiers, prune,
the review sweep), as the worker's hourly ``dream_schedule`` would at each of those nights."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.background.dream import DreamLoop, GateClosed
from app.vaults import get_vault

VAULT = "week"
YOGA_OLD = "I go to yoga twice a week to help with my anxiety."
YOGA_NEW = "I go to yoga three times a week now to help with my anxiety."
DENTIST = "My dentist is Dr. Lin, near the night market in Taipei."
WRONG = "My cat is called Tom."
FOLLOWERS_OLD = "I have about 1250 followers on Instagram."
FOLLOWERS_NEW = "My Instagram account is close to 1300 followers now."
KEPT = "I am learning to play the guitar with an online teacher."
# one thing a person says each session, on topics that do not restate each other
SAID = [
    "My sister Ana works at a bakery in Porto.", "I prefer window seats on long flights.",
    "Our team ships the billing service on Thursdays.", "I'm allergic to peanuts.",
    "The landlord fixed the kitchen sink yesterday.", "I started reading a novel about lighthouse keepers.",
    "My manager asked me to mentor the new intern.", "We adopted a rescue dog named Pixel.",
    "I switched my phone plan to a cheaper provider.", "I want to visit Kyoto in the autumn.",
    "My brother is studying marine biology in Lisbon.", "I bake sourdough bread on Sunday mornings.",
    "The gym near my office closes at ten.", "I'm saving for a new laptop for video editing.",
    "My grandmother turns ninety next spring.", "I volunteer at the library's reading club.",
    "I keep my passwords in a password manager.", "My favourite tea is a smoky lapsang souchong.",
    "The car needs new tyres before winter.", "I signed up for a pottery class downtown.",
    "My neighbour grows tomatoes on her balcony.", "I listen to jazz while I work.",
    "Our book club meets on the first Monday of the month.", "I stopped drinking coffee after lunch.",
    "My best friend moved to Vancouver for a job.", "I repaint the fence every other summer.",
    "The printer at work jams on thick paper.",
]


@pytest.fixture(autouse=True)
async def _pool_ready(services) -> None:
    await services.db.pool.resize(min_size=4, max_size=services.db.pool.max_size)
    await services.db.pool.wait()


def _day_sessions(day: int) -> list[list[str]]:
    """Five sessions a day (the dual gate wants at least 5 since the last dream), one or two turns each."""
    sessions = [[SAID[(day * 4 + i) % len(SAID)]] for i in range(4)]
    extra = {0: [YOGA_OLD, DENTIST, WRONG], 1: [KEPT, FOLLOWERS_OLD], 2: [DENTIST], 4: [YOGA_NEW], 5: [FOLLOWERS_NEW]}.get(day, [])
    sessions.append(extra or [SAID[(day * 4 + 4) % len(SAID)]])
    return sessions


async def _write_day(client, day: int, said: datetime) -> list[dict]:
    results = []
    for n, texts in enumerate(_day_sessions(day)):
        sid = f"d{day}-s{n}"
        turns = [{"role": "user", "content": t, "said_at": (said + timedelta(minutes=10 * i)).isoformat()}
                 for i, t in enumerate(texts)]
        r = await client.post(f"/v1/vaults/{VAULT}/sessions/{sid}/turns", json={"turns": turns})
        assert r.status_code == 200, r.text
        results += r.json()["chunks"]
        r = await client.post(f"/v1/vaults/{VAULT}/sessions/{sid}/close")
        assert r.status_code == 200, r.text
        results += r.json()["units"]
    return results


async def _blocks_like(services, vault, text: str) -> list[dict]:
    return [dict(r) for r in await services.db.fetchall(
        "SELECT id, kind, tier, digest, valid_at, invalid_at, superseded_by, retracted_at FROM memvault.block "
        "WHERE vault_id = %s AND content = %s ORDER BY id", (vault.id, text), vault_id=vault.id)]


async def _session_blocks(services, vault, block_id: int) -> set[int]:
    """Every block of the session ``block_id`` was written in (its chunks, units and summary)."""
    return {r["id"] for r in await services.db.fetchall(
        "SELECT id FROM memvault.block WHERE vault_id = %s AND session_id = "
        "(SELECT session_id FROM memvault.block WHERE vault_id = %s AND id = %s)", (vault.id, vault.id, block_id),
        vault_id=vault.id)}


async def _recall(client, query: str, **extra) -> list[dict]:
    r = await client.post(f"/v1/vaults/{VAULT}/recall", json={"query": query, "format": "json", **extra})
    assert r.status_code == 200, r.text
    return r.json()["cards"]


@pytest.mark.timeout(600)
async def test_a_week_of_nights_consolidates_the_vault(client, services) -> None:
    assert (await client.post("/v1/vaults", json={"name": VAULT})).status_code == 201
    vault = await get_vault(services.db, VAULT)
    dream = DreamLoop(services)
    real = datetime.now(UTC)
    said0 = real - timedelta(days=8)  # the conversations' own times (valid time), in the past
    night0 = (real + timedelta(days=1)).replace(hour=4, minute=0, second=0, microsecond=0)

    decisions: dict[str, int] = {}
    runs = []
    for day in range(7):
        for item in await _write_day(client, day, said0 + timedelta(days=day, hours=9)):
            decisions[item["decision"]] = decisions.get(item["decision"], 0) + 1
        night = night0 + timedelta(days=day)
        runs.append((await dream.run(vault, trigger="schedule", now=night)).run)  # the gate is open: no force
        with pytest.raises(GateClosed):  # a second dream the same night: no session since, and it says so
            await dream.run(vault, trigger="schedule", now=night + timedelta(hours=1))
        if day == 1:
            wrong = (await _blocks_like(services, vault, WRONG))[0]["id"]
            kept = (await _blocks_like(services, vault, KEPT))[0]["id"]
            for signal, block in (("-", wrong), ("-", wrong), ("+", kept)):
                r = await client.post(f"/v1/vaults/{VAULT}/memories/{block}/feedback", json={"signal": signal})
                assert r.status_code == 200, r.text

    assert [r["status"] for r in runs] == ["done"] * 7
    # a restated fact is stored once: the second telling of the dentist is skipped or merged at write time
    assert decisions.get("SKIP", 0) + decisions.get("MERGE", 0) >= 1, decisions
    assert len([b for b in await _blocks_like(services, vault, DENTIST) if b["retracted_at"] is None]) <= 2  # chunk, unit

    # two updates: the write track supersedes the close restatement (yoga) as it arrives, the dream the looser one
    # (followers: a value pair at cosine ~0.79 that write-time Dedup lets through); either way the old value ends
    # at the new statement's valid time, recall puts the new one first, and as_of before the change the old one
    for old_text, new_text, query in ((YOGA_OLD, YOGA_NEW, "How often do I go to yoga?"),
                                      (FOLLOWERS_OLD, FOLLOWERS_NEW, "How many followers do I have on Instagram?")):
        [old] = [b for b in await _blocks_like(services, vault, old_text) if b["kind"] == "unit"]
        new = await _blocks_like(services, vault, new_text)
        assert old["superseded_by"] in {b["id"] for b in new} | await _session_blocks(services, vault, new[0]["id"])
        assert old["invalid_at"] == new[0]["valid_at"]
        cards = [c["text"] for c in await _recall(client, query)]
        assert cards.index(new_text) < cards.index(old_text) if old_text in cards else new_text in cards
        before = [c["text"] for c in await _recall(client, query, as_of=(old["valid_at"] + timedelta(hours=1)).isoformat())]
        assert old_text in before and new_text not in before
    conflicts = (await client.get(f"/v1/vaults/{VAULT}/dream/conflicts")).json()
    assert [(c["source"], c["action"], c["status"]) for c in conflicts] == [("value", "SUPERSEDE", "applied")]

    # every night left its snapshot, and the profile shows them
    profile = (await client.get(f"/v1/vaults/{VAULT}/profile")).json()
    days = {s["day"] for s in profile["snapshots"]}
    assert {(night0 + timedelta(days=d)).date().isoformat() for d in range(7)} <= days
    # voted down on day 1, not recalled since: kept while it is less than 30 days idle
    assert all(b["retracted_at"] is None for b in await _blocks_like(services, vault, WRONG))

    # a month later, nobody talking: unused memories are cold and shown as digests, the upvoted one stays warm,
    # the one voted down twice and never used is pruned (retracted; its history stays)
    month = (await dream.run(vault, trigger="manual", force=True, now=night0 + timedelta(days=40))).run
    assert month["report"]["pruned"] == 1
    assert (await _blocks_like(services, vault, WRONG))[0]["retracted_at"] is not None
    assert (await client.get(f"/v1/vaults/{VAULT}/memories/{wrong}")).status_code in (200, 404, 410)
    kept_now = [b for b in await _blocks_like(services, vault, KEPT) if b["id"] == kept][0]
    assert kept_now["tier"] == "warm" and kept_now["digest"] is None
    tiers = {r["tier"]: r["n"] for r in await services.db.fetchall(
        "SELECT tier, count(*) AS n FROM memvault.block WHERE vault_id = %s AND retracted_at IS NULL "
        "AND kind IN ('memory', 'unit', 'chunk') GROUP BY tier", (vault.id,), vault_id=vault.id)}
    assert tiers == {"cold": tiers["cold"], "warm": 1} and tiers["cold"] > 30, tiers
    digests = await services.db.fetchall(
        "SELECT content, digest FROM memvault.block WHERE vault_id = %s AND tier = 'cold'", (vault.id,),
        vault_id=vault.id)
    assert all(d["digest"] and len(d["digest"]) <= 400 for d in digests)

    # the next night nothing moves back up: a move between tiers is not news (idleness counts from when the vault
    # learned a memory, or last recalled it)
    nxt = (await dream.run(vault, trigger="manual", force=True, now=night0 + timedelta(days=41))).run
    assert nxt["report"]["tiers"] == {} and nxt["report"]["pruned"] == 0

    # half a year on: what confidence does not keep is frozen to a headline; the memory in use stays warm
    later = (await dream.run(vault, trigger="manual", force=True, now=night0 + timedelta(days=200))).run
    assert later["status"] == "done"
    frozen = await services.db.fetchall(
        "SELECT digest FROM memvault.block WHERE vault_id = %s AND tier = 'frozen'", (vault.id,), vault_id=vault.id)
    assert later["report"]["tiers"] == {"cold->frozen": len(frozen)} and len(frozen) == tiers["cold"]
    assert all(0 < len(f["digest"]) <= 120 for f in frozen)
    kept_now = [b for b in await _blocks_like(services, vault, KEPT) if b["id"] == kept][0]
    assert kept_now["tier"] == "warm"
