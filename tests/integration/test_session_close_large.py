"""A session whose close gives more units than a client's batch may hold still closes (its units are not a
request: max_batch_items does not apply to them)."""

from __future__ import annotations

from datetime import UTC, datetime

from app.services import Services
from app.write.sessions import SessionTrack, TurnIn

T0 = datetime(2024, 8, 10, 20, 0, tzinfo=UTC)


async def test_a_close_with_more_units_than_a_batch_may_hold(services, vault) -> None:
    small = Services(settings=services.settings.model_copy(update={"max_batch_items": 2}), db=services.db,
                     embedder=services.embedder, llm=services.llm, reranker=services.reranker,
                     model_cache=services.model_cache)
    track = SessionTrack(small)
    said = ["My sister Anna moved to Berlin in March.", "I bought a Fujifilm camera at the Tokyo store.",
            "The garden needs new tomato stakes this spring.", "Our team picked PostgreSQL for the memory service."]
    await track.append_turns(vault, "long", [TurnIn("user", " ".join(said), T0)])
    closed = await track.close(vault, "long")
    assert len(closed.units) >= len(said) > small.settings.max_batch_items
