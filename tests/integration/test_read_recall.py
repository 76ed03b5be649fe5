"""The read track end to end on a real database: fast search, scoring, bitemporal filters, write-back, logs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import math

import pytest

from app.errors import InvalidInput
from app.read.config import RecallOptions
from app.read.recall import ReadTrack, recall
from tests.integration.read_helpers import Mem, put_blocks

FACTS = [
    "My sister Anna moved to Berlin in March to work as a nurse.",
    "I bought a Fujifilm X100V camera at the Tokyo store last week.",
    "The OCR project deadline was moved to Friday the 14th.",
    "I prefer green tea over coffee in the mornings.",
    "Our team decided to use PostgreSQL with pgvector for the memory service.",
    "I ran the Taipei marathon in 4 hours and 12 minutes.",
    "My dentist appointment is on Tuesday at 3 pm with Dr. Lin.",
    "我下個月要去京都旅行，住在祇園附近的民宿。",
]


async def test_fast_recall_finds_the_right_memory_and_writes_back(services, vault) -> None:
    ids = await put_blocks(services, vault, FACTS)
    result = await recall(services, vault, "When is the OCR project deadline?")
    assert result.cards, result.meta
    assert result.cards[0].id == ids[2]
    meta = result.meta
    assert meta["intent"] == "factual" and meta["thinking"] == "fast" and meta["mode"] == "LOCAL"
    assert {"embed", "classify", "search", "rerank", "format", "writeback"} <= set(meta["stage_ms"])
    assert 0 < meta["tokens"]["used"] <= meta["tokens"]["budget"]
    await ReadTrack.of(services).drain()
    usage = "SELECT access_count, last_accessed_at FROM memvault.block_usage WHERE block_id = %s"
    row = await services.db.fetchone(usage, (ids[2],))
    assert row["access_count"] == 1 and row["last_accessed_at"] is not None
    log = await services.db.fetchone("SELECT * FROM memvault.recall_log ORDER BY at DESC LIMIT 1")
    assert log["intent"] == "factual" and ids[2] in log["returned_ids"] and "search" in log["stage_ms"]

    # The write-back counts in block_usage and leaves the block row (and its HNSW and GIN entries) as it was.
    where = "SELECT ctid::text AS at FROM memvault.block WHERE id = %s"
    before = await services.db.fetchone(where, (ids[2],))
    await recall(services, vault, "When is the OCR project deadline?", RecallOptions(use_prefetch=False))
    await ReadTrack.of(services).drain()
    assert (await services.db.fetchone(usage, (ids[2],)))["access_count"] == 2
    assert (await services.db.fetchone(where, (ids[2],))) == before


async def test_keyword_and_chinese_queries(services, vault) -> None:
    ids = await put_blocks(services, vault, FACTS)
    r = await recall(services, vault, "Fujifilm X100V")
    assert r.cards[0].id == ids[1]
    r = await recall(services, vault, "京都旅行住哪裡？")
    assert r.cards[0].id == ids[7]


async def test_as_of_excludes_memories_not_yet_valid(services, vault) -> None:
    now = datetime.now(UTC)
    old, new = await put_blocks(services, vault, [Mem("I live in Taipei.", days_ago=400),
                                                   Mem("I live in Tainan now.", days_ago=10)], now=now)
    r = await recall(services, vault, "Where do I live?", RecallOptions(as_of=now - timedelta(days=100)))
    assert [c.id for c in r.cards] == [old]
    r = await recall(services, vault, "Where do I live?")
    assert new in [c.id for c in r.cards]


async def test_known_at_reads_the_version_believed_then(services, vault) -> None:
    [bid] = await put_blocks(services, vault, ["The launch is planned for June."])
    before = (await services.db.fetchone("SELECT clock_timestamp() AS t"))["t"]
    await services.db.fetchone("UPDATE memvault.block SET content = 'The launch moved to September.' "
                               "WHERE id = %s RETURNING id", (bid,))
    now = await recall(services, vault, "When is the launch?")
    assert now.cards[0].text == "The launch moved to September."
    then = await recall(services, vault, "When is the launch?", RecallOptions(known_at=before))
    assert then.cards[0].text == "The launch is planned for June."
    await services.db.fetchone("UPDATE memvault.block SET retracted_at = now() WHERE id = %s RETURNING id", (bid,))
    gone = await recall(services, vault, "When is the launch?")
    assert bid not in [c.id for c in gone.cards]


async def test_frozen_gives_digest_and_quarantined_is_filtered(services, vault) -> None:
    frozen, noisy = await put_blocks(services, vault, [
        Mem("Full text of the 2019 tax filing with every receipt itemised for the accountant.", tier="frozen",
            digest="2019 tax filing (digest)."),
        Mem("Tax filing tip from a spam message.", tags=("spam",)),
    ])
    r = await recall(services, vault, "tax filing")
    assert [c.text for c in r.cards if c.id == frozen] == ["2019 tax filing (digest)."]
    assert noisy not in [c.id for c in r.cards]


async def test_token_budget_split_and_long_memories_summarized(services, vault) -> None:
    long_text = "The marathon training plan: " + " ".join(f"week {i} run {i * 3} km easy pace." for i in range(80))
    [bid] = await put_blocks(services, vault, [Mem(long_text, summary="A 16-week marathon training plan.")])
    r = await recall(services, vault, "marathon training plan", RecallOptions(token_budget=100))
    card = r.cards[0]
    assert card.id == bid and card.text == "A 16-week marathon training plan." and card.expand["id"] == bid
    assert r.meta["tokens"]["used"] <= 100 and r.meta["tokens"]["summarized"] >= 1


async def test_near_duplicates_collapse(services, vault) -> None:
    a, b = await put_blocks(services, vault, ["I adopted a cat named Miso in May.",
                                               "I adopted a cat named Miso in May!"])
    r = await recall(services, vault, "cat named Miso")
    shown = [c.id for c in r.cards]
    assert len({a, b} & set(shown)) == 1 and r.meta["tokens"]["collapsed"] == 1


async def test_bad_input_is_rejected(services, vault) -> None:
    with pytest.raises(InvalidInput):
        await recall(services, vault, "   ")
    with pytest.raises(InvalidInput):
        await recall(services, vault, "x", RecallOptions(k=0))


async def test_the_sparse_rail_searches_the_questions_subject_not_its_framing(services, vault) -> None:
    from app.read.config import PROFILES, SearchConfig
    from app.read.context import RecallContext
    from app.read.search import FastSearch

    framing, subject = await put_blocks(services, vault, [
        "Not sure which journaling prompt to choose. Any suggestions or ideas?",
        "At the mixology class I made a gin cocktail with cucumber.",
    ])
    query = "I'm not sure which cocktail to choose for the party. Any suggestions?"
    qvec = services.embedder.embed_query(query)
    async with services.db.transaction(vault.id) as conn:
        ctx = RecallContext(query, vault=vault, qvec=qvec, scoring=PROFILES["factual"].scoring, limit=10, conn=conn)
        cands = await FastSearch(services, SearchConfig())(ctx, [])
    sparse = {c.id: c.sparse_rank for c in cands}
    # The framing words ("sure", "choose", "suggestions") reach the dense rail only; "cocktail" and "party"
    # are the sparse rail's terms.
    assert sparse.get(subject) == 1 and sparse.get(framing) is None


async def test_a_question_that_names_a_time_ranks_memories_from_it_first(services, vault) -> None:
    now = datetime.now(UTC)
    old, recent = await put_blocks(services, vault, [
        Mem("I finally beat the last boss in Elden Ring.", days_ago=40),
        Mem("I finally beat the last boss in Hollow Knight.", days_ago=2),
    ], now=now)
    as_of = now
    plain = await recall(services, vault, "Which game did I finally beat?", RecallOptions(as_of=as_of))
    assert plain.meta["timeframe"] is None and plain.cards[0].id == recent
    dated = await recall(services, vault, "Which game did I finally beat in the past 6 weeks?",
                         RecallOptions(as_of=as_of))
    assert dated.meta["timeframe"]["said"] == "the past 6 weeks" and {c.id for c in dated.cards[:2]} == {old, recent}
    month_of_old = (now - timedelta(days=40)).strftime("%B %Y")
    dated = await recall(services, vault, f"Which game did I finally beat in {month_of_old}?",
                         RecallOptions(as_of=as_of))
    assert dated.cards[0].id == old  # stage 1 measures age from that month, not from as_of


async def test_a_turn_and_the_answer_after_it_are_not_each_others_duplicates(services, vault) -> None:
    """Each turn is embedded with the end of the turn before it, so an answer sits close to its question; they are
    two things said, not one memory twice. The same words stored apart from that session still count as a
    duplicate."""
    from app.write.sessions import SessionTrack, TurnIn

    now = datetime.now(UTC)
    said = [TurnIn("user", "Did you enjoy the pottery class on Tuesday?", now),
            TurnIn("user", "I enjoyed the pottery class on Tuesday a lot.", now)]
    await SessionTrack(services).append_turns(vault, "talk", said)
    question, answer = [int(r["id"]) for r in await services.db.fetchall(
        "SELECT id FROM memvault.block WHERE vault_id = %s AND kind = 'chunk' ORDER BY id", (vault.id,),
        vault_id=vault.id)]
    [noted] = await put_blocks(services, vault, [Mem("Did you enjoy the pottery class on Tuesday?",
                                                     session_id="notes")])
    cos = await services.db.fetchone(
        "SELECT 1 - (a.embedding <=> b.embedding) AS cos FROM memvault.block a, memvault.block b "
        "WHERE a.vault_id = %s AND b.vault_id = a.vault_id AND a.id = %s AND b.id = %s",
        (vault.id, question, answer), vault_id=vault.id)
    assert cos["cos"] > 0.85  # close enough that the plain cosine rule would halve the answer
    qvec = services.embedder.embed_query("pottery class on Tuesday")
    got = await services.db.fetchall(
        "SELECT id, score, base, factors, dup_of, dup_cos FROM memvault.score_candidates_v2(%s, %s, %s)",
        ([question, answer, noted], [1.0, 0.9, 0.8], qvec), vault_id=vault.id)
    by_id = {int(r["id"]): r for r in got}
    halved = {i for i, r in by_id.items() if r["score"] < 0.75 * r["base"] * math.prod(r["factors"].values())}
    assert by_id[answer]["dup_of"] is None and answer not in halved and question not in halved
    assert noted in halved and by_id[noted]["dup_of"] == question and by_id[noted]["dup_cos"] > 0.85


async def test_reads_after_as_of_do_not_stretch_the_half_life(services, vault) -> None:
    """A read stretches a memory's half-life from when it happens: asked as of a past instant, reads made since
    do not count, so the ranking then is not the one later reads made."""
    now = datetime.now(UTC)
    [bid] = await put_blocks(services, vault, [Mem("I keep my passport in the blue drawer.", days_ago=60,
                                                   confidence=0.3, access_count=7)], now=now)
    qvec = services.embedder.embed_query("Where is my passport?")
    score = ("SELECT access_count, (factors->>'WeibullDecay')::float8 AS decay "
             "FROM memvault.score_candidates_v2(ARRAY[%s]::bigint[], ARRAY[1.0]::float8[], %s, %s)")
    month_ago = now - timedelta(days=30)

    async def last_read(at: datetime) -> None:
        async with services.db.transaction(vault.id) as conn:
            await conn.execute("UPDATE memvault.block_usage SET last_accessed_at = %s WHERE block_id = %s",
                               (at, bid))

    await last_read(now - timedelta(days=1))
    now_view = await services.db.fetchone(score, (bid, qvec, None), vault_id=vault.id)
    then_view = await services.db.fetchone(score, (bid, qvec, month_ago), vault_id=vault.id)
    assert now_view["access_count"] == 7 and then_view["access_count"] == 0  # all seven reads came later

    await last_read(now - timedelta(days=45))
    read_before = await services.db.fetchone(score, (bid, qvec, month_ago), vault_id=vault.id)
    assert read_before["access_count"] == 7
    # 30 days old then: a cold memory's 14-day half-life has mostly run out, 7 reads (x 4: 56 days) had kept it
    assert then_view["decay"] < read_before["decay"] - 0.1
