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


async def test_the_footprint_names_the_clusters_memory_and_the_vaults_disk(services) -> None:
    from app.bench.footprint import footprint

    vault = await create_vault(services.db, "held")
    await fill(services, vault, 20, 16, quiet=True, build_ann_index=False)
    held = await footprint(services, vault)
    disk, memory = held["disk_mb"], held["memory_mb"]
    assert disk["database"] > disk["block_table"] > 0 and disk["block_indexes"] > 0
    assert disk["vault_hnsw_index"] == 0  # 20 memories: no index of its own
    assert memory["postgres_shared_buffers"] and memory["bench_process_peak_rss_mb"] > 50
    pg = memory["postgres"]
    assert pg is not None and pg["processes"] >= 3 and pg["private_rss_mb"] > 0 and pg["shared_rss_mb"] > 0
