"""bench latency's fill resumes (app/bench/corpus.py): a vault filled part way and filled again to N holds what one
fill to N writes, without screening its texts again (issue 32: a million memories are filled over several runs)."""

from __future__ import annotations

import pytest

from app.bench.corpus import fill, vault_memories
from app.bench.runtime import EVAL_DIR
from app.vaults import create_vault

pytestmark = pytest.mark.skipif(not (EVAL_DIR / "locomo_dev.json").exists(), reason="no dev files beside the checkout")


async def contents(services, vault) -> list[tuple]:
    rows = await services.db.fetchall(
        "SELECT b.content, b.kind, b.valid_at, s.decision FROM memvault.block b "
        "JOIN memvault.block_source s ON s.block_id = b.id AND s.vault_id = b.vault_id "
        "WHERE b.vault_id = %s ORDER BY s.said_at, b.content", (vault.id,))
    return [tuple(r.values()) for r in rows]


async def test_a_fill_stopped_midway_goes_on_where_it_stopped(services) -> None:
    whole, resumed = await create_vault(services.db, "whole"), await create_vault(services.db, "resumed")
    n, _ = await fill(services, whole, 60, 16, quiet=True, build_ann_index=False)
    part, _ = await fill(services, resumed, 25, 16, quiet=True, build_ann_index=False)
    assert 25 <= part < n
    again, seconds = await fill(services, resumed, 60, 16, quiet=True, build_ann_index=False)
    assert again == n and seconds > 0
    # The same memories, from the same texts said at the same times; no text written twice (a second screening
    # of the first texts would add a SKIP source for each).
    assert await contents(services, resumed) == await contents(services, whole)
    # Full: nothing more is written, and no time is spent.
    assert await fill(services, resumed, 60, 16, quiet=True) == (await vault_memories(services, resumed), 0.0)
