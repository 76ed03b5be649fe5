"""The ``full`` pipeline for the benchmarks: the read track's own ``recall``, as an agent calls it.

The benchmark asks for ``n`` cards with a token budget large enough that the budget never cuts them (recall is
compared at equal context size through ``tokens@10`` instead); cards come first, then cascade cards. The card
text is what an agent would read (a long memory shows its summary), so ``tokens@10`` counts that text.
"""

from __future__ import annotations

from datetime import datetime

from app.bench.harness import Hit
from app.read.config import ReadConfig
from app.services import Services
from app.vaults import Vault

UNCUT_BUDGET = 1_000_000  # tokens: far above anything n cards can hold


class FullRecall:
    """``config``: a read configuration other than the service's (a candidate setting of ``bench ... --tune``);
    ``writeback=False`` leaves access counts as they are, so kept vaults score the same on every run."""

    def __init__(self, services: Services, thinking: str | None = None, *, config: ReadConfig | None = None,
                 writeback: bool = True) -> None:
        from app.read.recall import ReadTrack

        self.services = services
        self.thinking = thinking
        self.track = ReadTrack(services, config) if config is not None else ReadTrack.of(services)
        self.writeback = writeback
        self.last_meta: dict | None = None

    async def __call__(self, vault: Vault, query: str, *, as_of: datetime | None, n: int) -> list[Hit]:
        from app.read.config import RecallOptions

        max_k = self.track.config.max_k
        options = RecallOptions(format="cards", token_budget=UNCUT_BUDGET, as_of=as_of, k=min(n, max_k),
                                thinking=self.thinking, writeback=self.writeback)
        result = await self.track.recall(vault, query, options)
        self.last_meta = result.meta
        seen: set[int] = set()
        hits: list[Hit] = []
        for card in [*result.cards, *result.cascade_cards]:
            if card.id not in seen:
                seen.add(card.id)
                hits.append(Hit(card.id, card.text))
        return hits


def grid_recalls(services: Services, grid: dict[str, ReadConfig]) -> dict[str, FullRecall]:
    """One full-pipeline retriever per candidate setting of a ``--tune`` grid, with write-back off so no setting's
    recalls move another's ranking."""
    return {name: FullRecall(services, config=cfg, writeback=False) for name, cfg in grid.items()}


def with_settings(results: dict[str, dict], grid: dict[str, ReadConfig]) -> dict:
    """The grid's first setting's result, with every setting's per-question details under ``by_setting``."""
    return {**results[next(iter(grid))], "by_setting": {name: r["details"] for name, r in results.items()}}
