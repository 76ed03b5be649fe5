"""SessionContinuity: the turns around the top hits, from the same session, scored like every candidate."""

from __future__ import annotations

from datetime import UTC, datetime

from app.read.config import RecallOptions
from app.read.recall import recall
from app.write.sessions import SessionTrack, TurnIn

T0 = datetime(2024, 8, 10, 20, 0, tzinfo=UTC)

CAMPING = [
    ("user", "Melanie: Last summer we went camping by the lake and saw the Perseid meteor shower."),
    ("user", "Caroline: Wow, that must have been something! How did it feel?"),
    ("user", "Melanie: I felt tiny and in awe of the universe, it reminded me how small our worries are."),
    ("user", "Caroline: That sounds beautiful. I should try that with my friends."),
    ("user", "Melanie: You should! Bring warm blankets, the nights get cold out there."),
]
FEELINGS = [
    ("user", "Melanie: I feel so proud watching my kids grow, I feel it every day."),
    ("user", "Melanie: Watching the sunrise at the beach made me feel calm and happy."),
    ("user", "Caroline: How did Melanie feel about the new job? She said she felt nervous but excited."),
]
OTHER = [
    ("user", "Melanie: The pottery class on Tuesday was great, I made a blue bowl."),
    ("user", "Caroline: I started volunteering at the youth center downtown."),
]


async def _turn_blocks(services, vault, session: str, turns) -> list[int]:
    res = await SessionTrack(services).append_turns(vault, session, [TurnIn(r, c, T0) for r, c in turns])
    rows = await services.db.fetchall(
        "SELECT t.seq, b.id FROM memvault.block b JOIN memvault.turn t ON t.vault_id = b.vault_id "
        "AND t.id = ANY (b.source_turn_ids) WHERE b.vault_id = %s AND b.kind = 'chunk' AND t.id = ANY (%s) "
        "ORDER BY t.seq", (vault.id, list(res.turn_ids)), vault_id=vault.id)
    return [int(r["id"]) for r in rows]


async def test_session_neighbours_are_the_turns_around_each_hit(services, vault) -> None:
    camping = await _turn_blocks(services, vault, "camping", CAMPING)
    other = await _turn_blocks(services, vault, "other", OTHER)
    assert len(camping) == 5 and len(other) == 2
    rows = await services.db.fetchall("SELECT * FROM memvault.session_neighbours_v1(%s::bigint[], %s)",
                                      ([camping[0], other[0]], 2), vault_id=vault.id)
    got = {int(r["id"]): (int(r["parent_id"]), r["distance"]) for r in rows}
    # two turns after the first camping turn, one after the first pottery turn; the hits themselves are not
    # neighbours, and nothing crosses sessions
    assert got == {camping[1]: (camping[0], 1), camping[2]: (camping[0], 2), other[1]: (other[0], 1)}


async def test_the_answer_two_turns_after_the_topic_is_recalled(services, vault) -> None:
    from app.read.config import ContinuityConfig, ReadConfig, SearchConfig
    from app.read.recall import ReadTrack

    camping = await _turn_blocks(services, vault, "camping", CAMPING)
    await _turn_blocks(services, vault, "other", OTHER)
    await _turn_blocks(services, vault, "feelings", FEELINGS)
    query = "How did Melanie feel while watching the meteor shower?"
    options = RecallOptions(k=5, thinking="fast", as_of=T0, use_prefetch=False, writeback=False)
    # Rails of 3 candidates each: in a vault of thousands of turns the answer is not among the rails' best.
    narrow = SearchConfig(dense_n=3, sparse_n=3, min_rail_n=3)
    off = ReadTrack(services, ReadConfig(search=narrow, continuity=ContinuityConfig(enabled=False)))
    on = ReadTrack(services, ReadConfig(search=narrow))
    without = [c.id for c in (await off.recall(vault, query, options)).cards]
    result = await on.recall(vault, query, options)
    ids = [c.id for c in result.cards]
    # The answer never names the meteor shower: the rails miss it; as the topic's neighbour it is recalled.
    assert camping[0] in without and camping[2] not in without
    assert camping[0] in ids and camping[2] in ids
    answer = next(c for c in result.cards if c.id == camping[2])
    assert answer.origin == "context"
    events = [e for e in result.meta["events"] if e.get("stage") == "continuity"]
    assert events and events[0]["neighbours"] >= 2


async def test_neighbour_lookup_reads_only_around_the_hits_when_statistics_are_stale(services, vault) -> None:
    """Right after an import, before autovacuum's ANALYZE, the planner believes the turn table is empty. Joined
    freely, the lookup then looped over every turn for every turn (2.1 s a call at 419 turns instead of ~10 ms);
    each step now looks up what the step before found. Counted in rows read, not in time."""
    from app.vaults import create_vault, drop_vault

    topics = ["the lake", "pottery", "a charity run", "the museum", "painting", "adoption", "camping", "a concert",
              "the new job", "a road trip"]
    turns = [("user", f"Melanie: on day {i} we talked about {topics[i % 10]} for the {i}th time, and also {j}.")
             for i, j in enumerate(["apples", "rain", "trains", "maps", "music", "boats", "chess", "tea", "bread",
                                    "stars", "kites", "shoes", "clocks", "bees", "snow", "owls", "paper", "glass",
                                    "salt", "wool", "jam", "rope", "ink", "moss", "sand", "corn", "fern", "lamp",
                                    "tin", "oak", "fog", "gold", "hay", "ice", "jade", "kelp", "lime", "mint",
                                    "nut", "opal"])]
    # The turn table as a benchmark leaves it: another vault's conversation written, that vault dropped, the table
    # analyzed (its pages still there, no live row: the planner expects 0 turns however many are written next).
    await _turn_blocks(services, await create_vault(services.db, "dropped-before"), "long", turns)
    await drop_vault(services.db, "dropped-before")
    async with services.db.transaction() as conn:
        await conn.execute("ANALYZE memvault.turn")
    blocks = await _turn_blocks(services, vault, "long", turns)
    hits = blocks[5:30:6]
    async with services.db.transaction(vault.id) as conn:
        await conn.execute("SET LOCAL plan_cache_mode = force_custom_plan")  # the plan of the first calls

        async def rows_read() -> int:
            cur = await conn.execute(
                "SELECT coalesce(sum(coalesce(idx_tup_fetch, 0) + coalesce(seq_tup_read, 0)), 0)::bigint AS n "
                "FROM pg_stat_xact_user_tables WHERE schemaname = 'memvault' AND relname IN ('block', 'turn')")
            return int((await cur.fetchone())["n"])

        before = await rows_read()
        cur = await conn.execute("SELECT * FROM memvault.session_neighbours_v1(%s::bigint[], 2)", (hits,))
        found = await cur.fetchall()
        read = await rows_read() - before
    assert len(turns) == 40 and len(found) == 4 * len(hits)
    # Read here: ~570 rows (each hit's block and turn, the turns around it, their chunks through provenance);
    # the free join read 2,640, growing with turns x turns.
    assert read < 1_500, read
