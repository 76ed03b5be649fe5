"""KnowledgeLint (seed 004): four levels, from cheap to expensive.

1. Structure, in SQL (``lint_scan_v1``): self-loops, malformed triples, triples whose evidence memory is gone,
   two-cycles of an asymmetric predicate.
2. Grounding against the canonical predicate definitions (domain and range; ``memvault.canonical_predicate``): a
   subject or object typed otherwise than the predicate wants, a predicate with no definition.
3. The LLM judge (the ``lint_judge`` task; its heuristic twin offline) over the memories new since the last
   dream: stale time references, memories linked to nothing.
4. Three-stage confirmation for what a fix would change: a fix whose impact is high is marked and queued for
   review (mark), re-checked when a person approves it (check: the finding must still hold) and only then applied
   (commit), by ``lint_commit_v1``; a low-impact fix with a sure rule is committed at once through the same path.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

from app.background.config import DreamConfig
from app.db.queries import Q
from app.models.tasks import LINT_JUDGE, LintInput

if TYPE_CHECKING:
    from datetime import datetime

    import psycopg

    from app.models.base import LLM

# How sure each structural rule is that its fix is right (the review queue's confidence).
RULE_CONFIDENCE = {"self_loop": 0.95, "malformed_triple": 0.9, "dangling_evidence": 0.9, "cycle": 0.6}


class KnowledgeLint:
    def __init__(self, llm: LLM, config: DreamConfig | None = None) -> None:
        self.llm = llm
        self.config = config or DreamConfig()

    async def __call__(self, conn: psycopg.AsyncConnection, run_id: int, since: datetime | None) -> dict[str, Any]:
        cur = await conn.execute(Q.lint_scan, (run_id,))
        found = {r["rule"]: r["found"] for r in await cur.fetchall()}
        judged = await self._judge(conn, run_id, since)
        confirmed = await self._confirm(conn)
        return {"found": found, "judge": judged, **confirmed}

    async def _judge(self, conn: psycopg.AsyncConnection, run_id: int, since: datetime | None) -> dict[str, int]:
        cfg = self.config
        cur = await conn.execute(Q.lint_snapshot,
                                 (since, list(cfg.scan_kinds), cfg.reflect_max_memories))
        items = []
        rows = await cur.fetchall()
        for r in rows:
            out = await self.llm.run(LINT_JUDGE, LintInput(memory={"text": r["content"][:4000],
                                                                   "recorded_at": r["recorded_at"],
                                                                   "links": r["links"]}))
            items += [{"rule": f"judge_{i.kind}", "key": str(r["block_id"]),
                       "detail": f"{i.severity}: {i.reason}", "subject": {"block": r["block_id"]}}
                      for i in out.issues if i.kind in ("stale", "orphan", "contradiction", "duplicate")]
        cur = await conn.execute(Q.lint_add, (run_id, json.dumps(items)))
        return {"memories": len(rows), "findings": (await cur.fetchone())["n"]}

    async def _confirm(self, conn: psycopg.AsyncConnection) -> dict[str, int]:
        cfg = self.config
        cur = await conn.execute(Q.review_thresholds, ("lint", cfg.review_min_confidence, cfg.review_max_impact))
        th = await cur.fetchone()
        cur = await conn.execute(Q.lint_fixable)
        fixed = queued = 0
        for f in await cur.fetchall():
            confidence = RULE_CONFIDENCE.get(f["rule"], 0.5)
            impact = 1.0 - math.exp(-float(f["impact_signal"]) / cfg.impact_scale)
            if confidence > th["min_confidence"] and impact < th["max_impact"]:
                c = await conn.execute(Q.lint_commit, (f["finding_id"],))
                fixed += (await c.fetchone())["s"] == "fixed"
                continue
            await conn.execute(Q.lint_mark, (f["finding_id"],))
            await conn.execute(
                Q.review_enqueue,
                ("lint", f["finding_id"], json.dumps({"fix": f["fix"], "target_id": f["target_id"], "rule": f["rule"],
                                              "detail": f["detail"]}),
                 confidence, impact, f"{f['rule']}: {f['detail']} (fix {f['fix']}, confidence {confidence:.2f}, "
                                     f"impact {impact:.2f})", cfg.review_ttl_days))
            queued += 1
        return {"fixed": fixed, "queued": queued}
