"""The ``day_first`` setting reaches both tracks: what is written and what is asked read "03/04/2023" alike."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from app.read.config import RecallOptions
from app.write.items import WriteItem

SAID = datetime(2023, 6, 15, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(("day_first", "day"), [(False, "2023-03-04"), (True, "2023-04-03")])
async def test_day_first_is_read_by_the_write_and_the_read_track(db_url, test_settings, day_first, day):
    from app.services import Services
    from app.vaults import create_vault

    services = await Services.start(test_settings.model_copy(update={"day_first": day_first}), url=db_url)
    try:
        vault = await create_vault(services.db, "dates")
        [result] = await services.write.remember(vault, [
            WriteItem(content="My passport appointment is on 03/04/2023.", said_at=SAID, source_kind="user")])
        row = await services.db.fetchone("SELECT norm_spans FROM memvault.block WHERE vault_id = %s AND id = %s",
                                         (vault.id, result.block_id), vault_id=vault.id)
        assert [s["value"] for s in row["norm_spans"] if s["kind"] == "date"] == [day]
        found = await services.read.recall(vault, "What did I have on 03/04/2023?",
                                           RecallOptions(as_of=SAID, writeback=False))
        frame = found.meta["timeframe"]
        assert frame is not None and frame["start"].startswith(day), frame
        assert [c.id for c in found.cards] == [result.block_id]
    finally:
        await services.close()
