"""bench longmemeval asks for more memories until 10 sessions are filled: fewer cards than asked is not the end
(the formatter collapses a closed session's units that repeat their turn), only an answer that stops growing is."""

from __future__ import annotations

from datetime import UTC, datetime

from app.bench import longmemeval
from app.importers.datasets import LmeQuestion, Session
from app.bench.harness import Hit
from app.bench.metrics import Memory

DAY = datetime(2023, 5, 1, tzinfo=UTC)


class Collapsing:
    """A retriever over ``blocks`` (block id -> session) that returns 86% of what it is asked, as a formatter
    collapsing near-duplicate units would, never more than the vault holds."""

    def __init__(self, blocks: dict[int, str]) -> None:
        self.blocks = blocks
        self.asked: list[int] = []

    async def __call__(self, vault, query, *, as_of, n):
        self.asked.append(n)
        return [Hit(i) for i in list(self.blocks)[: min(len(self.blocks), int(n * 0.86))]]


def _question(sessions: list[str]) -> LmeQuestion:
    return LmeQuestion(id="q", type="multi-session", question="?", date=DAY, answer="-",
                       answer_session_ids=tuple(sessions[:1]),
                       sessions=tuple(Session(s, DAY, ()) for s in dict.fromkeys(sessions)))


async def _memories(services, vault, hits, *, blocks):
    return [Memory(text="", sessions=(blocks[h.block_id],), block_id=h.block_id) for h in hits]


async def test_asks_again_while_the_answer_grows(monkeypatch):
    # 7 sessions of 7 blocks each, then 8 more sessions of one block each: 50 asked give 43 cards, 7 sessions
    blocks = {i: f"s{i // 7}" for i in range(49)} | {49 + j: f"t{j}" for j in range(8)}
    retriever = Collapsing(blocks)
    monkeypatch.setattr(longmemeval, "memories_for", lambda s, v, hits: _memories(s, v, hits, blocks=blocks))
    _, ranked, _ = await longmemeval.recall_sessions(None, retriever, None, _question(list(blocks.values())))
    assert retriever.asked == [50, 100]
    assert len(ranked) == 15  # every session once the second answer holds every block


async def test_stops_when_asking_for_more_brings_nothing_more(monkeypatch):
    blocks = {i: f"s{i % 4}" for i in range(30)}  # a small vault: 4 sessions in all
    retriever = Collapsing(blocks)
    monkeypatch.setattr(longmemeval, "memories_for", lambda s, v, hits: _memories(s, v, hits, blocks=blocks))
    _, ranked, _ = await longmemeval.recall_sessions(None, retriever, None, _question(list(blocks.values())))
    assert retriever.asked == [50, 100]  # 30 then 30 again: the vault has no more
    assert sorted(ranked) == ["s0", "s1", "s2", "s3"]
