"""Tiering and the one-way TierDigest (seed 004), and the closed-loop prune.

Each memory's tier follows its recency (the later of when it was recorded and last recalled), its access and its
confidence (``tier_plan_v1``). Moving down to cold writes a digest of at most 400 characters (the ``summarize``
task, mode tier_digest: extractive offline, so it can only copy); moving to frozen, a headline of at most 120.
From then on recall shows the digest, never the text again, even if the memory warms up: expanding it back would
fill the past in with today's model. The content itself stays in the row and its earlier version in block_history,
so erasure and export still see it. Pruning retracts only memories people voted down and nobody recalls; a memory
in active use is never pruned.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from app.background.config import TierConfig
from app.db.queries import Q
from app.models.tasks import SUMMARIZE, SummarizeInput
from app.models.tasks.text import split_sentences, truncate_chars

if TYPE_CHECKING:
    from datetime import datetime

    import psycopg

    from app.models.base import LLM

ORDER = {"hot": 0, "warm": 1, "cold": 2, "frozen": 3}


class TierDigest:
    def __init__(self, llm: LLM, config: TierConfig | None = None) -> None:
        self.llm = llm
        self.config = config or TierConfig()

    async def _digest(self, text: str) -> str:
        out = await self.llm.run(SUMMARIZE, SummarizeInput(mode="tier_digest", texts=[text]))
        return out.summary

    def _headline(self, text: str) -> str:
        first = next(iter(split_sentences(text)), text)
        return truncate_chars(first, self.config.headline_chars)

    async def __call__(self, conn: psycopg.AsyncConnection, now: datetime | None = None) -> dict[str, Any]:
        """Move the vault's memories to the tier their recency, access and confidence give at ``now`` (the
        database's clock when None), compressing on the way down; prune what people voted down and nobody uses."""
        c = self.config
        cur = await conn.execute(Q.tier_plan,
                                 (now, c.hot_days, c.warm_days, c.cold_days, c.keep_confidence, c.batch))
        moves = []
        counts: dict[str, int] = {}
        for r in await cur.fetchall():
            down = ORDER[r["to_tier"]] > ORDER[r["from_tier"]]
            digest = None
            if down and r["to_tier"] == "cold" and r["digest"] is None:
                digest = await self._digest(r["content"])
            elif down and r["to_tier"] == "frozen":
                digest = self._headline(r["digest"] or await self._digest(r["content"]))
            moves.append({"id": r["block_id"], "tier": r["to_tier"], "digest": digest})
            key = f"{r['from_tier']}->{r['to_tier']}"
            counts[key] = counts.get(key, 0) + 1
        if moves:
            await conn.execute(Q.apply_tiers, (json.dumps(moves),))
        cur = await conn.execute(Q.prune_rejected,
                                 (now, c.prune_min_down, c.prune_idle_days))
        pruned = (await cur.fetchone())["ids"]
        return {"moves": counts, "pruned": len(pruned)}
