"""GraphCentrality: the graph centrality that PPRBoost (scoring stage 7, ``x (1 + w x ppr_score)``, w 0.1 by
default: ``ScoringConfig.ppr_w``) reads.

Seed 000 gives stage 7 "bonus points for being cited on the knowledge network" (HippoRAG), and seed 004's dream
loop gathers "PPR centrality". For each vault whose graph changed, PageRank runs over its entities (each valid
triple an undirected edge weighted by its confidence; damping 0.85, uniform teleport: ``app.pagerank``), the
scores are scaled so the most central entity has 1, and ``memvault.apply_centrality_v1`` gives each block that is
a triple's evidence the score of its most central triple (the geometric mean of the two ends: a hub that every
memory mentions, such as the user, does not lift everything it touches), scaled so the vault's most central
block has 1. Blocks that evidence nothing keep 0, and PPRBoost leaves them as they are.

The job ``graph_centrality`` runs every 10 minutes and scores only the vaults whose count of valid triples or
newest triple changed; ``memvault centrality [--vault NAME]`` does it at once.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING
from uuid import UUID

from app.db.queries import Q
from app.pagerank import pagerank
from app.worker.app import app
from app.worker.context import services_of

if TYPE_CHECKING:
    from procrastinate import JobContext

    from app.db.connector import Database

log = logging.getLogger(__name__)

TASK = "graph_centrality"


@dataclass(frozen=True, slots=True)
class CentralityReport:
    vault_id: str
    entities: int
    triples: int
    blocks_changed: int

    def as_dict(self) -> dict:
        return asdict(self)


class GraphCentrality:
    def __init__(self, db: Database, *, damping: float = 0.85) -> None:
        self.db = db
        self.damping = damping

    async def score_vault(self, vault_id: UUID, *, triples: int, max_triple: int) -> CentralityReport:
        """Recompute one vault's block scores from its current graph."""
        db = self.db
        edges = [(int(r["subject_id"]), int(r["object_id"]), float(r["weight"]))
                 for r in await db.fetchall(Q.centrality_edges, vault_id=vault_id)]
        ranks = pagerank(edges, damping=self.damping)
        top = max(ranks.values(), default=0.0)
        ids = list(ranks)
        scores = [ranks[i] / top for i in ids] if top > 0 else []
        row = await db.fetchone(Q.apply_centrality,
                                (ids, scores, triples, max_triple), vault_id=vault_id)
        report = CentralityReport(str(vault_id), len(ids), len(edges), int(row["n"]) if row else 0)
        log.info("graph centrality of vault %s: %d entities, %d triples, %d blocks changed", vault_id,
                 report.entities, report.triples, report.blocks_changed)
        return report

    async def score_due(self, vault_id: UUID | None = None) -> list[CentralityReport]:
        """Every vault whose graph changed since it was scored (or only ``vault_id``, if it is due)."""
        due = await self.db.fetchall(Q.centrality_due)
        return [await self.score_vault(r["vault_id"], triples=int(r["triples"]), max_triple=int(r["max_triple"]))
                for r in due if vault_id is None or r["vault_id"] == vault_id]



@app.periodic(cron="*/10 * * * *", periodic_id=TASK)
@app.task(name=TASK, queue="maintenance", queueing_lock=TASK, pass_context=True)
async def graph_centrality(context: JobContext, timestamp: int) -> list[dict]:
    """Every 10 minutes: rescore the blocks of each vault whose graph changed. Periodic: nothing defers it."""
    return [r.as_dict() for r in await GraphCentrality(services_of(context).db).score_due()]
