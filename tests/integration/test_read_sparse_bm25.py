"""The sparse rail with BM25 scoring (memvault.sparse_plan_v2 + _sparse_rail_v2, ``sparse_bm25`` in fast search's
config): the same matches as the idf-sum rail, ordered by term-frequency saturation and length normalization
against the vault's mean block length, which refresh_lexeme_stats_v1 keeps (lexeme_stats_state.postings)."""

from __future__ import annotations

import json
import math

from tests.integration.read_helpers import put_blocks

FILLER = [f"Notes about the weather on day {i}, cloudy and mild" for i in range(40)]


async def _sparse(services, vault, query: str, **cfg) -> list[int]:
    async with services.db.transaction(vault.id) as conn:
        cur = await conn.execute(
            "SELECT id, sparse_rank FROM memvault.fast_search_v1(NULL, %s, NULL, NULL, %s::jsonb)",
            (query, json.dumps({"dense_n": 0, "sparse_n": 10, **cfg})))
        rows = await cur.fetchall()
    return [r["id"] for r in sorted(rows, key=lambda r: r["sparse_rank"])]


async def _refresh(services, vault) -> None:
    await services.db.fetchone("SELECT memvault.refresh_lexeme_stats_v1(%s) AS n", (vault.id,), vault_id=vault.id)


async def test_refresh_keeps_the_summed_lengths_and_the_plan_reads_their_mean(services, vault) -> None:
    await put_blocks(services, vault, [*FILLER, "A ferry to Zanzibar"])
    before = await services.db.fetchone("SELECT * FROM memvault.sparse_plan_v2('ferry zanzibar')", vault_id=vault.id)
    assert before["avg_len"] is None  # not counted yet: no length normalization
    await _refresh(services, vault)
    lengths = await services.db.fetchall("SELECT length(tsv) AS n FROM memvault.block WHERE vault_id = %s",
                                         (vault.id,), vault_id=vault.id)
    state = await services.db.fetchone("SELECT blocks, postings FROM memvault.lexeme_stats_state "
                                       "WHERE vault_id = %s", (vault.id,), vault_id=vault.id)
    assert state["postings"] == sum(r["n"] for r in lengths) and state["blocks"] == 41
    plan = await services.db.fetchone("SELECT * FROM memvault.sparse_plan_v2('ferry zanzibar')", vault_id=vault.id)
    assert math.isclose(plan["avg_len"], state["postings"] / 41)
    # BM25's idf of a lexeme in 1 block of 41: ln(1 + (41 - 1 + 0.5) / (1 + 0.5)).
    assert plan["lexemes"] == ["ferri", "zanzibar"]
    assert all(math.isclose(x, math.log(1 + 40.5 / 1.5)) for x in plan["idf"])


async def test_term_frequency_saturates_and_long_blocks_are_normalized(services, vault) -> None:
    ids = await put_blocks(services, vault, [
        *FILLER,
        "Zanzibar",  # 0: the term once, a one-lexeme block
        "Zanzibar trip: we planned the ferry, hotels, beaches, spice farms, dhow sailing, museums, food stalls, "
        "markets, sunsets and snorkeling around the islands",  # 1: the term once, a long block
        "Zanzibar, Zanzibar, Zanzibar: I keep saying it",  # 2: the term three times
    ])
    short, long_, thrice = ids[-3:]
    await _refresh(services, vault)
    bm25 = await _sparse(services, vault, "Zanzibar", sparse_bm25=True)
    # The idf-sum rail scores the three alike (one term each) and leaves them to ts_rank's tie-break; BM25 puts
    # the repeated term first and the long block last.
    assert bm25 == [thrice, short, long_]
    # Without length normalization (b = 0) the short and the long block tie on BM25 too: only tf separates.
    flat = await _sparse(services, vault, "Zanzibar", sparse_bm25=True, sparse_b=0)
    assert flat[0] == thrice and set(flat[1:]) == {short, long_}
    # Saturation: as k1 goes to 0 neither tf nor length counts (each block scores the term's idf); the three
    # tie and ts_rank's tie-break (over distinct words: the one-word block first) decides; the repeated term no
    # longer leads.
    no_tf = await _sparse(services, vault, "Zanzibar", sparse_bm25=True, sparse_k1=0.0001)
    assert no_tf == [short, thrice, long_]


async def test_bm25_and_idf_sum_match_the_same_blocks(services, vault) -> None:
    ids = await put_blocks(services, vault, [*FILLER, "Coffee in the garden", "Booked the ferry to Zanzibar",
                                             "Garden roses", "Coffee with oat milk"])
    await _refresh(services, vault)
    for query in ("coffee garden zanzibar", "weather ferry", "how are you"):
        v1 = await _sparse(services, vault, query, sparse_n=100)
        v2 = await _sparse(services, vault, query, sparse_n=100, sparse_bm25=True)
        assert set(v1) == set(v2) and set(v1) <= set(ids)
    # Two query terms outrank one, as in the idf-sum rail.
    both = await _sparse(services, vault, "coffee garden", sparse_bm25=True)
    assert both[0] == ids[-4]


async def test_chinese_stop_words_leave_the_query_and_content_bigrams_stay(services, vault) -> None:
    ids = await put_blocks(services, vault, [*FILLER, "我的猫叫小白，它很喜欢睡觉", "我的名字是安娜，我们什么都聊",
                                             "你们的狗叫什么？"])
    await _refresh(services, vault)
    stop = await services.db.fetchall("SELECT l, memvault.zh_stop_v1(l) AS stop FROM unnest(%s::text[]) AS l",
                                      (["我的", "的猫", "什么", "我", "好吗", "猫叫", "名字", "小白", "coffe"],),
                                      vault_id=vault.id)
    assert {r["l"]: r["stop"] for r in stop} == {"我的": True, "的猫": True, "什么": True, "我": True, "好吗": True,
                                                 "猫叫": False, "名字": False, "小白": False, "coffe": False}
    plan = await services.db.fetchone("SELECT lexemes FROM memvault.sparse_plan_v2('我的猫叫什么名字？')",
                                      vault_id=vault.id)
    assert set(plan["lexemes"]) <= {"猫叫", "叫什", "么名", "名字"} and {"猫叫", "名字"} <= set(plan["lexemes"])
    # Each of the three holds one content bigram of the question (猫叫; 名字; 叫什), and the stop bigrams they share
    # with it (我的, 什么) are no terms; the rail reads them all.
    hits = await _sparse(services, vault, "我的猫叫什么名字？", sparse_bm25=True)
    assert set(hits) == set(ids[-3:])
    assert await services.db.fetchall("SELECT * FROM memvault.sparse_plan_v2('我们的什么')", vault_id=vault.id) == []
