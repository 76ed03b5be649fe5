"""The dream's personal layer and upkeep: attitude version chains and decay curves, skill levels and half-life,
tiering with the one-way TierDigest, the closed-loop prune that spares memories in use, surprise discovery, the
daily snapshot, the profile and the gaps, and their routes' 4xx."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest

from app.background.config import PersonalConfig
from app.background.dream import DreamLoop
from app.background.personal import Personal, attitude_category
from app.read.recall import recall
from tests.integration.read_helpers import Mem, put_blocks

T0 = datetime(2026, 3, 1, tzinfo=UTC)


async def test_attitude_chains_and_decay_curve(services, vault) -> None:
    p = Personal()
    lam = PersonalConfig().attitude_lambda
    async with services.db.transaction(vault.id) as conn:
        a1 = await p.upsert_attitude(conn, category="design_principle", statement="Prefer a modular monolith",
                                     confidence=0.85, evidence=["s1"], now=T0)
        a2 = await p.upsert_attitude(conn, category="design_principle", statement="prefer a  modular monolith",
                                     confidence=0.6, evidence=["s2"], now=T0 + timedelta(days=10))
        assert a2["corroborated"] and a2["id"] == a1["id"] and a2["evidence"] == ["s1", "s2"]
        b = await p.upsert_attitude(conn, category="design_principle", statement="Prefer microservices",
                                    confidence=0.8, now=T0 + timedelta(days=20))
        assert b["version"] == 2 and b["previous_id"] == a1["id"]
        # preferences coexist across versions; each decays from its own last confirmation
        at = {x["statement"]: x for x in await p.attitudes(conn, now=T0 + timedelta(days=100))}
        assert set(at) == {"Prefer a modular monolith", "Prefer microservices"}
        assert at["Prefer a modular monolith"]["confidence"] == pytest.approx(0.85 * math.exp(-lam * 90), abs=1e-4)
        assert at["Prefer microservices"]["confidence"] == pytest.approx(0.8 * math.exp(-lam * 80), abs=1e-4)
        # the curve: half after ~90 days, suppressed (not deleted) below 0.2
        half = await p.attitudes(conn, now=T0 + timedelta(days=10 + 90))
        assert [x["confidence"] for x in half if x["id"] == a1["id"]][0] == pytest.approx(0.425, abs=0.01)
        late = T0 + timedelta(days=10 + 200)
        assert await p.attitudes(conn, now=late) == []
        kept = await p.attitudes(conn, now=late, include_suppressed=True)
        assert len(kept) == 2 and all(x["suppressed"] for x in kept)
        # facts supersede: one current fact per category, the older kept as suppressed history
        f1 = await p.upsert_attitude(conn, category="tech_choice", kind="fact", statement="Uses Python 3.11", now=T0)
        f2 = await p.upsert_attitude(conn, category="tech_choice", kind="fact", statement="Uses Python 3.13",
                                     now=T0 + timedelta(days=1))
        current = [x for x in await p.attitudes(conn, now=T0 + timedelta(days=2)) if x["category"] == "tech_choice"]
        assert [x["id"] for x in current] == [f2["id"]]
        every = await p.attitudes(conn, now=T0 + timedelta(days=2), include_suppressed=True)
        assert any(x["id"] == f1["id"] and x["superseded_at"] is not None for x in every)
    assert attitude_category("I prefer writing short sentences") == "writing_style"
    assert attitude_category("I like dark mode everywhere") == "aesthetic"


async def test_skill_levels_rise_with_use_and_halve_with_disuse(services, vault) -> None:
    p = Personal()
    async with services.db.transaction(vault.id) as conn:
        for i in range(3):
            s = await p.record_skill_use(conn, "rust async", evidence=f"s{i}", now=T0 + timedelta(hours=i))
        assert s["level"] == 2 and s["uses"] == 3 and s["experience"] == pytest.approx(3.0, abs=0.01)
        for i in range(8):
            s = await p.record_skill_use(conn, "rust async", now=T0 + timedelta(days=1, hours=i))
        assert s["level"] == 3
        [now] = await p.skills(conn, now=T0 + timedelta(days=1, hours=8))
        exp = now["experience"]
        [later] = await p.skills(conn, now=T0 + timedelta(days=61, hours=8))  # one half-life unused
        assert later["experience"] == pytest.approx(exp / 2, rel=1e-3) and later["level"] == 2
        [much_later] = await p.skills(conn, now=T0 + timedelta(days=241, hours=8))
        assert much_later["level"] == 1


async def test_routes_for_attitudes_skills_profile_and_gaps(client, services, vault) -> None:
    r = await client.post(f"/v1/vaults/{vault.name}/attitudes",
                          json={"category": "pace", "statement": "Deep work in the morning"})
    assert r.status_code in (200, 201) and r.json()["version"] == 1
    r = await client.post(f"/v1/vaults/{vault.name}/attitudes", json={"category": "mood", "statement": "x"})
    assert r.status_code == 422 and "category" in r.text
    assert [a["statement"] for a in (await client.get(f"/v1/vaults/{vault.name}/attitudes")).json()] == \
        ["Deep work in the morning"]
    r = await client.post(f"/v1/vaults/{vault.name}/skills/sourdough/use", json={"evidence": "s9"})
    assert r.status_code in (200, 201) and r.json()["level"] == 1
    r = await client.post(f"/v1/vaults/{vault.name}/skills/sourdough/use", json={"amount": 0})
    assert r.status_code == 422
    assert (await client.get(f"/v1/vaults/{vault.name}/skills")).json()[0]["name"] == "sourdough"
    await put_blocks(services, vault, ["I bake sourdough bread on Sundays."])
    await recall(services, vault, "What do I bake?")
    await DreamLoop(services).run(vault, force=True)
    prof = (await client.get(f"/v1/vaults/{vault.name}/profile")).json()
    assert set(prof["windows"]) == {"7", "30", "90"} and prof["windows"]["7"]["recalls"] == 1
    assert prof["windows"]["7"]["intents"][0]["count"] == 1
    assert prof["snapshots"][0]["recalls"] == 1 and prof["snapshots"][0]["day"] == str(datetime.now(UTC).date())
    r = await client.get(f"/v1/vaults/{vault.name}/profile?days=0")
    assert r.status_code in (400, 422)
    gaps = (await client.get(f"/v1/vaults/{vault.name}/gaps")).json()
    assert gaps == {"structural": [], "repeated_failure": []}


async def test_tier_digest_is_one_way_and_prune_spares_memories_in_use(services, vault) -> None:
    long = ("The lease for the flat on Elm Street runs until June 2027. The rent is 1,450 euros a month, due on "
            "the first. The landlord, Mr. Okafor, wants three months' notice. " * 6).strip()
    old, used, voted_down, voted_down_used = await put_blocks(services, vault, [
        Mem(long, days_ago=1), Mem("My bike lock code is 4417.", days_ago=1),
        Mem("The gym opens at 5 am on weekdays.", days_ago=1), Mem("The pool opens at 6 am.", days_ago=1)])
    async with services.db.transaction(vault.id) as conn:
        # recorded long ago: the idle clock starts at the later of recorded and last recalled
        await conn.execute("UPDATE memvault.block SET recorded_at = now() - interval '120 days' WHERE vault_id = %s",
                           (vault.id,))
        await conn.execute("INSERT INTO memvault.block_usage (vault_id, block_id, access_count, last_accessed_at, "
                           "feedback_up, feedback_down) VALUES (%s, %s, 4, now() - interval '100 days', 1, 0), "
                           "(%s, %s, 0, NULL, 0, 3), (%s, %s, 2, now() - interval '1 day', 0, 3)",
                           (vault.id, used, vault.id, voted_down, vault.id, voted_down_used))
    report = (await DreamLoop(services).run(vault, force=True)).run["report"]
    assert report["tiers"].get("hot->cold", 0) >= 1 and report["pruned"] == 1
    rows = {r["id"]: r for r in await services.db.fetchall(
        "SELECT id, tier, digest, content, retracted_at FROM memvault.block WHERE vault_id = %s", (vault.id,),
        vault_id=vault.id)}
    assert rows[old]["tier"] == "cold" and 0 < len(rows[old]["digest"]) <= 400 and rows[old]["content"] == long
    assert rows[used]["tier"] == "warm" and rows[used]["digest"] is None  # upvoted: in use, never below warm
    assert rows[voted_down]["retracted_at"] is not None  # voted down, never recalled
    assert rows[voted_down_used]["retracted_at"] is None  # voted down but in use: never pruned
    # recall shows the digest; the original stays in the row and in history
    r = await recall(services, vault, "When does the Elm Street lease end?")
    card = [c for c in r.cards if c.id == old][0]
    assert card.text == rows[old]["digest"]
    versions = await services.db.fetchall("SELECT * FROM memvault.block_versions_v1(%s, %s)", (vault.id, old),
                                          vault_id=vault.id)
    assert {v["content"] for v in versions} == {long}
    # frozen: a headline; warming up again never brings the text back (the recall above counted as an access)
    async with services.db.transaction(vault.id) as conn:
        for table in ("block", "block_history"):  # learned 400 days ago: every version (a tier move is no news)
            await conn.execute(f"UPDATE memvault.{table} SET recorded_at = now() - interval '400 days' "
                               "WHERE vault_id = %s AND id = %s", (vault.id, old))
        await conn.execute("UPDATE memvault.block_usage SET last_accessed_at = now() - interval '300 days' "
                           "WHERE vault_id = %s AND block_id = %s", (vault.id, old))
    await DreamLoop(services).run(vault, force=True)
    frozen = await services.db.fetchone("SELECT tier, digest FROM memvault.block WHERE vault_id = %s AND id = %s",
                                        (vault.id, old), vault_id=vault.id)
    assert frozen["tier"] == "frozen" and len(frozen["digest"]) <= 120
    async with services.db.transaction(vault.id) as conn:
        await conn.execute("UPDATE memvault.block_usage SET last_accessed_at = now() WHERE vault_id = %s "
                           "AND block_id = %s", (vault.id, old))
    await DreamLoop(services).run(vault, force=True)
    warm = await services.db.fetchone("SELECT tier, digest FROM memvault.block WHERE vault_id = %s AND id = %s",
                                      (vault.id, old), vault_id=vault.id)
    assert warm["tier"] in ("hot", "warm") and warm["digest"] == frozen["digest"]


async def test_dream_files_preferences_and_skill_uses(services, vault) -> None:
    await put_blocks(services, vault, [Mem("I prefer dark mode in every editor.", category="Preference",
                                           session_id="s5")])
    async with services.db.transaction(vault.id) as conn:
        cur = await conn.execute("INSERT INTO memvault.entity (vault_id, name, canonical_key) VALUES "
                                 "(%s, 'user', 'user'), (%s, 'Rust', 'rust') RETURNING id", (vault.id, vault.id))
        user, rust = [r["id"] for r in await cur.fetchall()]
        [bid] = await put_blocks(services, vault, [Mem("I use Rust for the parser.", session_id="s6")])
        await conn.execute("INSERT INTO memvault.triple (vault_id, subject_id, predicate, object_id, "
                           "evidence_block_id, confidence, valid_at) VALUES (%s, %s, 'uses', %s, %s, 0.9, now())",
                           (vault.id, user, rust, bid))
    report = (await DreamLoop(services).run(vault, force=True)).run["report"]
    assert report["personal"] == {"attitudes": 1, "skill_uses": 1}
    async with services.db.transaction(vault.id) as conn:
        [att] = await Personal().attitudes(conn)
        [sk] = await Personal().skills(conn)
    assert att["category"] == "tooling" or att["category"] == "aesthetic"
    assert att["evidence"] == ["s5"] and sk["name"] == "Rust" and sk["evidence"] == ["s6"]


async def test_erasure_reaches_what_the_dream_derived(services, vault) -> None:
    [pref] = await put_blocks(services, vault, [Mem("I prefer Quaxolotl notebooks for every sketch.",
                                                    category="Preference", session_id="s7")])
    await DreamLoop(services).run(vault, force=True)
    async with services.db.transaction(vault.id) as conn:
        [att] = await Personal().attitudes(conn)
    assert "Quaxolotl" in att["statement"]
    await services.db.fetchone("SELECT memvault.purge_block_v1(%s, %s) AS r", (vault.id, pref))
    residue = await services.db.fetchall("SELECT * FROM memvault.erasure_residue_v1('Quaxolotl')")
    assert [r for r in residue if r["schema_name"] == "memvault"] == []
