"""HopExpansion: the second hop of a question that gathers (asks_many), by shared entity, community and meaning.

A planted two-hop structure: the question finds the memory about Melanie's puppy Biscuit; the memory of a trip
with Biscuit never says "Melanie" or "puppy", so the rails (narrowed to 3 candidates each, as in a vault of
thousands of turns) miss it. The two memories share the entity Biscuit (a triple each), or, for the community
case, two entities the dream put in one community.
"""

from __future__ import annotations

from dataclasses import replace

from app.read.config import HopConfig, ReadConfig, RecallOptions, SearchConfig
from app.read.recall import ReadTrack
from tests.integration.read_helpers import Mem, put_blocks, put_graph

NARROW = SearchConfig(dense_n=3, sparse_n=3, min_rail_n=3)
OPTIONS = RecallOptions(k=10, thinking="fast", use_prefetch=False, writeback=False)
GATHER = "What activities has Melanie done with her new puppy?"  # asks for many (present perfect)
SINGLE = "What is the name of Melanie's new puppy?"  # asks for one thing

FILLER = [
    "Melanie thinks the new bakery downtown is too expensive.",
    "Melanie's week was mostly work meetings.",
    "Melanie has done a lot of painting with watercolours lately.",
    "Melanie bought new running shoes for the charity run.",
    "Caroline went to an LGBTQ support group on Tuesday.",
    "Caroline is researching adoption agencies in her city.",
    "The pottery class meets every Thursday evening downtown.",
    "Melanie and Caroline talked about their favourite books.",
    "Caroline's mentor gave a talk about transgender rights.",
    "Melanie is thinking about learning the guitar this winter.",
    "Caroline painted a sunset over the lake last month.",
    "Melanie's kids want to visit the science museum.",
    "The weather was rainy for most of the week.",
    "Caroline keeps a journal of her counselling sessions.",
    "Melanie baked bread for the neighbours on Sunday.",
    "Caroline found a necklace that belonged to her grandmother.",
    "Melanie fixed the fence in the back yard.",
    "Caroline's brother moved to Denver for a new job.",
    "Melanie watched a documentary about whales.",
    "Caroline signed up for a self-defence course.",
]


async def _vault(services, vault) -> dict[str, int]:
    ids = await put_blocks(services, vault, [
        Mem("Melanie adopted a new puppy named Biscuit from the animal shelter.", session_id="s1"),
        Mem("Biscuit chewed through the garden hose, then we all drove to Lake Tahoe for a swim.", session_id="s2"),
        Mem("Truckee has the best pancakes; we hiked there on Saturday morning.", session_id="s3"),
        *[Mem(t, session_id=f"f{i}") for i, t in enumerate(FILLER)],
    ])
    adopt, hose, hike, fill = ids[0], ids[1], ids[2], ids[3:]
    # The graph: Melanie in many triples (the person the conversation is about: a hub, no link), Biscuit in two.
    things = [f"Thing{i}" for i in range(len(fill))]
    await put_graph(services, vault, ["Melanie", "Biscuit", "Lake Tahoe", "Shelter", "Truckee", "Pancakes", *things],
                    [("Melanie", "adopted", "Biscuit", adopt), ("Biscuit", "from", "Shelter", adopt),
                     ("Biscuit", "visited", "Lake Tahoe", hose), ("Truckee", "has", "Pancakes", hike),
                     *[("Melanie", "mentions", t, b) for t, b in zip(things, fill, strict=True)]])
    return {"adopt": adopt, "hose": hose, "hike": hike}


def _track(services, **hops) -> ReadTrack:
    return ReadTrack(services, ReadConfig(search=NARROW, hops=replace(HopConfig(), **hops)))


async def test_the_second_hop_through_a_shared_entity_reaches_the_top_10(services, vault) -> None:
    b = await _vault(services, vault)
    off = await _track(services, entity_n=0, dense_n=0).recall(vault, GATHER, OPTIONS)
    on = await _track(services, entity_n=20, dense_n=0, communities=False).recall(vault, GATHER, OPTIONS)
    before, after = [c.id for c in off.cards], [c.id for c in on.cards]
    assert b["adopt"] in before and b["hose"] not in before  # the rails find the first hop only
    assert b["hose"] in after[:10], (on.meta["events"][0], [(c.id, c.score, c.origin) for c in on.cards])
    assert next(c for c in on.cards if c.id == b["hose"]).origin == "hop"
    assert b["hike"] not in after  # shares no entity with the first hop
    ev = [e for e in on.meta["events"] if e.get("stage") == "hops"]
    assert ev and ev[0]["via_entity"] >= 1 and ev[0]["entered"] >= 1
    # Melanie names 21 of the 23 evidence blocks: no link (every filler would come in through her otherwise)
    rows = await services.db.fetchall("SELECT * FROM memvault.hop_entities_v1(%s::bigint[], 50, 0.1)",
                                      ([b["adopt"]],), vault_id=vault.id)
    assert {int(r["id"]) for r in rows} == {b["hose"]}


async def test_the_second_hop_through_a_community(services, vault) -> None:
    b = await _vault(services, vault)
    ids = await services.db.fetchall("SELECT id, name FROM memvault.entity WHERE vault_id = %s", (vault.id,),
                                     vault_id=vault.id)
    eid = {r["name"]: r["id"] for r in ids}
    async with services.db.transaction(vault.id) as conn:  # what the dream's Leiden step leaves: one community
        cur = await conn.execute("INSERT INTO memvault.community (vault_id, resolution, size, label) "
                                 "VALUES (%s, 1.0, 3, 'lake trip') RETURNING id", (vault.id,))
        cid = (await cur.fetchone())["id"]
        for name in ("Lake Tahoe", "Truckee", "Pancakes"):
            await conn.execute("INSERT INTO memvault.community_member (vault_id, community_id, entity_id) "
                               "VALUES (%s, %s, %s)", (vault.id, cid, eid[name]))
    # seeded at the trip: the hike shares no entity with it, only the community
    rows = await services.db.fetchall("SELECT * FROM memvault.hop_entities_v1(%s::bigint[], 50, 0.1, NULL, %s)",
                                      ([b["hose"]], True), vault_id=vault.id)
    got = {int(r["id"]): r["via"] for r in rows}
    assert got == {b["adopt"]: "entity", b["hike"]: "community"}
    rows = await services.db.fetchall("SELECT * FROM memvault.hop_entities_v1(%s::bigint[], 50, 0.1, NULL, %s)",
                                      ([b["hose"]], False), vault_id=vault.id)
    assert {int(r["id"]) for r in rows} == {b["adopt"]}
    query = "Where has Biscuit been with the family?"
    off = await _track(services, entity_n=20, dense_n=0, communities=False).recall(vault, query, OPTIONS)
    on = await _track(services, entity_n=20, dense_n=0, communities=True).recall(vault, query, OPTIONS)
    assert b["hose"] in [c.id for c in off.cards] and b["hike"] not in [c.id for c in off.cards]
    assert b["hike"] in [c.id for c in on.cards][:10]


async def test_a_single_hop_question_keeps_its_ranking(services, vault) -> None:
    await _vault(services, vault)
    off = await _track(services, entity_n=0, dense_n=0).recall(vault, SINGLE, OPTIONS)
    on = await _track(services, entity_n=20, dense_n=10).recall(vault, SINGLE, OPTIONS)
    assert [c.id for c in on.cards] == [c.id for c in off.cards] and on.cards
    assert [c.score for c in on.cards] == [c.score for c in off.cards]
    assert not any(e.get("stage") == "hops" for e in on.meta["events"])


async def test_dense_neighbours_of_the_seeds(services, vault) -> None:
    ids = await put_blocks(services, vault, [
        "I signed up for a pottery class on Tuesdays.",
        "My pottery teacher showed me how to glaze a bowl.",
        "The stock market fell sharply this afternoon.",
        "Quarterly earnings reports came out for the banks.",
    ])
    rows = await services.db.fetchall("SELECT * FROM memvault.hop_dense_v1(%s::bigint[], 1)",
                                      ([ids[0], ids[2]],), vault_id=vault.id)
    got = {int(r["id"]): int(r["parent_id"]) for r in rows}
    assert got == {ids[1]: ids[0], ids[3]: ids[2]}  # each seed's nearest, the seeds themselves left out
    assert all(0 < r["weight"] <= 1 for r in rows)
