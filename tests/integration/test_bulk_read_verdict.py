"""The bulk path leaves the read-time sanitizer's verdict to a block's first recall (BulkConfig.read_verdict
False, its default): no verdict is written with the blocks, in the model threads or in the screening process,
and the first recall shows what a recall of a vault written with verdicts shows, then keeps the verdicts it
judged."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from app.safety.verdict import RULES, is_clean
from app.write.bulk import BulkConfig, BulkIngest
from app.write.items import WriteItem
from app.write.screen_process import ScreenProcess
from tests.integration.test_read_verdict import BLOCKS, OPTIONS, QUERY, T0, TEXTS, VERDICTS, _shown

ITEMS = [WriteItem(content=t, said_at=T0 + timedelta(minutes=i)) for i, t in enumerate(TEXTS)]


def _cards(result) -> list:
    """The shown cards without their block ids (two vaults draw ids from one sequence)."""
    return [c[1:] for c in _shown(result)]


async def test_a_bulk_import_without_verdicts_recalls_as_one_with_them(services, vault) -> None:
    from app.vaults import create_vault

    judged = await create_vault(services.db, "judged-at-write")
    config = BulkConfig(screen_process=False)
    assert not config.read_verdict  # the default: left to the first recall
    await BulkIngest(services, replace(config, read_verdict=True)).memories(judged, ITEMS)
    await BulkIngest(services, config).memories(vault, ITEMS)
    assert len(await services.db.fetchall(VERDICTS, vault_id=judged.id)) == len(TEXTS)
    assert await services.db.fetchall(VERDICTS, vault_id=vault.id) == []

    lazy = await services.read.recall(vault, QUERY, OPTIONS)
    assert _cards(lazy) == _cards(await services.read.recall(judged, QUERY, OPTIONS))
    assert any(card[2] for card in _shown(lazy))  # the directive is flagged by the rules the recall ran
    blocks = {r["id"]: r["content"] for r in await services.db.fetchall(BLOCKS, vault_id=vault.id)}
    kept = await services.db.fetchall(VERDICTS, vault_id=vault.id)
    assert {r["block_id"] for r in kept} >= {card[0] for card in _shown(lazy)}  # kept by the first recall
    assert all(r["rules"] == RULES and r["clean"] == is_clean(blocks[r["block_id"]]) for r in kept)


async def test_the_screening_process_leaves_the_verdict_when_told(services) -> None:
    child = ScreenProcess(services.settings)
    try:
        judged = await child.screen(ITEMS)
        left = await child.screen(ITEMS, read_verdict=False)
    finally:
        child.close()
    assert [p.read_clean for p in judged] == [is_clean(t) for t in TEXTS]
    assert [p.read_clean for p in left] == [None] * len(TEXTS)
    assert [p.normalized for p in left] == [p.normalized for p in judged]
