"""Interest profile and gaps (seed 004): a page of "today's you" every day, the 7 / 30 / 90-day windows, and
the two kinds of gap: structural (uneven access to neighbours in the graph) and repeated failure (a question the
read track's CRAG judged INCORRECT again and again: ``knowledge_gap``, opened by app/read/crag.py).

The daily snapshot's top entities are the PageRank of the vault's graph (``app.pagerank`` over the valid triples,
as the centrality job computes it); its intents come from ``recall_log``; its delta is against the snapshot before.
"""

from __future__ import annotations

import json
from datetime import date
from typing import TYPE_CHECKING, Any

from app.db.queries import Q
from app.pagerank import pagerank

if TYPE_CHECKING:
    import psycopg

TOP_N = 10


async def write_snapshot(conn: psycopg.AsyncConnection, day: date, *, top_n: int = TOP_N) -> dict[str, Any]:
    cur = await conn.execute(Q.centrality_edges)
    edges = [(int(r["subject_id"]), int(r["object_id"]), float(r["weight"])) for r in await cur.fetchall()]
    ranks = pagerank(edges)
    top = sorted(ranks.items(), key=lambda kv: (-kv[1], kv[0]))[:top_n]
    cur = await conn.execute(Q.entity_names, ([e for e, _ in top],))
    names = {r["entity_id"]: r["name"] for r in await cur.fetchall()}
    entities = [{"name": names[e], "ppr": round(s, 5)} for e, s in top if e in names]
    cur = await conn.execute(Q.write_daily_snapshot,
                             (day, json.dumps(entities), top_n))
    return (await cur.fetchone())["s"]


async def profile(conn: psycopg.AsyncConnection, *, days: int = 7) -> dict[str, Any]:
    cur = await conn.execute(Q.interest_profile)
    windows = {str(r["window_days"]): {"recalls": r["recalls"], "intents": r["intents"], "entities": r["entities"]}
               for r in await cur.fetchall()}
    cur = await conn.execute(Q.daily_snapshots, (days,))
    return {"windows": windows, "snapshots": [r["s"] for r in await cur.fetchall()]}


async def gaps(conn: psycopg.AsyncConnection, *, min_access: int = 3, min_failures: int = 2) -> dict[str, Any]:
    cur = await conn.execute(Q.structural_gaps, (min_access,))
    structural = [dict(r) for r in await cur.fetchall()]
    cur = await conn.execute(Q.failure_gaps, (min_failures,))
    failures = [dict(r) for r in await cur.fetchall()]
    return {"structural": structural, "repeated_failure": failures}
