"""ProvenanceExpansion: a session summary or a dreamed community summary the rails find brings in its sources.

The rails are narrowed to 3 candidates each (as in a vault of thousands of turns). The answer to the question is a
turn that never names its topic ("we went with Hope Families in the end"); the session's summary does, and the
rails find the summary, or (once the vault dreamed) a community summary near the question, not the turn.
"""

from __future__ import annotations

from dataclasses import replace

from app.read.config import ProvenanceConfig, ReadConfig, RecallOptions, SearchConfig
from app.read.recall import ReadTrack
from tests.integration.read_helpers import Mem, put_blocks, put_graph

NARROW = SearchConfig(dense_n=3, sparse_n=3, min_rail_n=3)
OPTIONS = RecallOptions(k=10, thinking="fast", use_prefetch=False, writeback=False)
QUESTION = "Which adoption agency did Caroline choose?"

FILLER = [
    "Melanie thinks the new bakery downtown is too expensive.",
    "Melanie's week was mostly work meetings.",
    "Melanie bought new running shoes for the charity run.",
    "The pottery class meets every Thursday evening downtown.",
    "Melanie is thinking about learning the guitar this winter.",
    "The weather was rainy for most of the week.",
    "Melanie fixed the fence in the back yard.",
    "Caroline's brother moved to Denver for a new job.",
    "Adoption agencies often ask for references from friends.",
    "An adoption agency in Ohio closed last year.",
]


async def _session_vault(services, vault) -> dict[str, int]:
    ids = await put_blocks(services, vault, [
        Mem("Caroline talked about her adoption plans: which agency she chose after comparing several, and her "
            "favourite books.", kind="summary", session_id="s9", category="Topic"),
        Mem("Caroline: we went with Hope Families in the end, they were so warm with us.", kind="chunk",
            session_id="s9"),
        Mem("Melanie: I finished that mystery novel you lent me, loved the ending.", kind="chunk", session_id="s9"),
        Mem("Melanie: the garden is finally blooming after all that rain.", kind="chunk", session_id="s9"),
        *[Mem(t, session_id=f"f{i}") for i, t in enumerate(FILLER)],
    ])
    return {"summary": ids[0], "answer": ids[1], "novel": ids[2], "garden": ids[3]}


def _track(services, **provenance) -> ReadTrack:
    provenance = replace(ProvenanceConfig(enabled=True), **provenance)
    return ReadTrack(services, ReadConfig(search=NARROW, provenance=provenance))


async def test_a_session_summary_brings_in_the_turn_it_stands_for(services, vault) -> None:
    b = await _session_vault(services, vault)
    off = await _track(services, per_source=0).recall(vault, QUESTION, OPTIONS)
    on = await _track(services, per_source=1).recall(vault, QUESTION, OPTIONS)
    before, after = [c.id for c in off.cards], [c.id for c in on.cards]
    assert b["summary"] in before and b["answer"] not in before  # the rails find the summary, not the turn
    assert b["answer"] in after[:10], [(c.id, c.score, c.origin) for c in on.cards]
    assert next(c for c in on.cards if c.id == b["answer"]).origin == "provenance"
    assert b["novel"] not in after and b["garden"] not in after  # one source per summary: the nearest
    ev = [e for e in on.meta["events"] if e.get("stage") == "provenance"]
    assert ev and ev[0]["summaries"] == 1 and ev[0]["via_session"] == 1 and ev[0]["entered"] == 1
    # summary_w < 1 places the summary after the source it stands for
    low = await _track(services, per_source=1, summary_w=0.1).recall(vault, QUESTION, OPTIONS)
    ranked = [c.id for c in low.cards]
    assert ranked.index(b["answer"]) < ranked.index(b["summary"])


async def test_the_sql_returns_the_nearest_chunks_of_the_summarised_session(services, vault) -> None:
    b = await _session_vault(services, vault)
    qvec = services.embedder.embed_query(QUESTION)
    rows = await services.db.fetchall(
        "SELECT * FROM memvault.provenance_sources_v1(%s::bigint[], %s, NULL, 2, 0)",
        ([b["summary"], b["novel"]], qvec), vault_id=vault.id)
    got = {int(r["id"]): (r["parent_id"], r["via"]) for r in rows}
    assert len(got) == 2 and got[b["answer"]] == (b["summary"], "session")  # only the summary expands
    assert set(got) <= {b["answer"], b["novel"], b["garden"]}
    async with services.db.transaction(vault.id) as conn:  # a retracted turn is no source
        await conn.execute("UPDATE memvault.block SET retracted_at = now() WHERE id = %s", (b["answer"],))
    rows = await services.db.fetchall(
        "SELECT * FROM memvault.provenance_sources_v1(%s::bigint[], %s, NULL, 3, 0)",
        ([b["summary"]], qvec), vault_id=vault.id)
    assert b["answer"] not in {int(r["id"]) for r in rows} and len(rows) == 2


async def _community_vault(services, vault) -> dict[str, int]:
    """What a dream leaves: a community (Caroline, Hope Families) and its L2 summary, embedded."""
    ids = await put_blocks(services, vault, [
        Mem("Caroline: we went with Hope Families in the end, they were so warm with us.", kind="chunk",
            session_id="s9"),
        Mem("Hope Families moved their office across town last spring.", kind="chunk", session_id="s10"),
        *[Mem(t, session_id=f"f{i}") for i, t in enumerate(FILLER)],
    ])
    answer, forms = ids[0], ids[1]
    eid = await put_graph(services, vault, ["Caroline", "Hope Families", "Office"],
                          [("Caroline", "chose", "Hope Families", answer), ("Hope Families", "moved", "Office", forms)])
    summary = "Caroline chose the adoption agency Hope Families, whose office moved across town."
    vec = services.embedder.embed_documents([summary])[0]
    async with services.db.transaction(vault.id) as conn:
        cur = await conn.execute("INSERT INTO memvault.community (vault_id, resolution, size, label) "
                                 "VALUES (%s, 1.0, 3, 'adoption') RETURNING id", (vault.id,))
        cid = (await cur.fetchone())["id"]
        for name in ("Caroline", "Hope Families", "Office"):
            await conn.execute("INSERT INTO memvault.community_member (vault_id, community_id, entity_id) "
                               "VALUES (%s, %s, %s)", (vault.id, cid, eid[name]))
        await conn.execute("SELECT memvault.set_community_summary_v1(%s, %s, '{}', %s)", (cid, summary, vec))
    return {"answer": answer, "forms": forms}


async def test_a_dreamed_community_summary_brings_in_its_evidence(services, vault) -> None:
    b = await _community_vault(services, vault)
    off = await _track(services, community_w=0.0).recall(vault, QUESTION, OPTIONS)
    on = await _track(services, community_w=1.0, per_source=1).recall(vault, QUESTION, OPTIONS)
    assert b["answer"] not in [c.id for c in off.cards]
    after = [c.id for c in on.cards]
    assert b["answer"] in after[:10], [(c.id, c.score, c.origin) for c in on.cards]
    assert b["forms"] not in after  # one source per community: the nearest
    ev = [e for e in on.meta["events"] if e.get("stage") == "provenance"]
    assert ev and ev[0]["via_community"] == 1
    # a community summary far from the question brings nothing
    far = await _track(services, community_w=1.0, min_cosine=0.99).recall(vault, QUESTION, OPTIONS)
    assert b["answer"] not in [c.id for c in far.cards]


async def test_off_by_default(services, vault) -> None:
    b = await _session_vault(services, vault)
    out = await ReadTrack(services, ReadConfig(search=NARROW)).recall(vault, QUESTION, OPTIONS)
    assert b["answer"] not in [c.id for c in out.cards]
    assert not any(e.get("stage") == "provenance" for e in out.meta["events"])


async def test_a_vault_without_summaries_keeps_its_ranking(services, vault) -> None:
    await put_blocks(services, vault, [Mem(t, session_id=f"f{i}") for i, t in enumerate(FILLER)])
    off = await _track(services, per_source=0).recall(vault, QUESTION, OPTIONS)
    on = await _track(services, community_w=1.0).recall(vault, QUESTION, OPTIONS)
    assert [(c.id, c.score) for c in on.cards] == [(c.id, c.score) for c in off.cards] and on.cards
