"""The second dense rail: each block embedded by a second model as well, searched as a third RRF rail.

On by default (``settings.rail2_embedder``: e5-onnx, multilingual-e5-small on onnxruntime). The first embedder
(USE) is fast and good across languages but weak at matching a question with the statement that answers it;
multilingual-e5-small was trained on question-passage pairs and finds other answers, but embeds ~73 blocks per
CPU second here against USE's ~1,260 texts. So the write track never waits for it: the worker's ``embed_rail2``
job embeds what was written since its last run (``memvault.block_rail2``, one row per block, stale when the
block's content or the model changes), and ``fast_search_v1`` fuses the rail in for the blocks it has reached. A
block without its row is on the two other rails as before.

Where it runs is read configuration (``SearchConfig.rail2_fast`` / ``rail2_slow`` / ``rail2_variants``): the slow
path's question and its multi-query variants (embedded in one call, ``search_params_many``), not the fast path.
LoCoMo dev leave-one-conversation-out @10 (docs/read-track-log.md round 13): 0.803 / 0.818 / 0.808 without the
rail, 0.818 / 0.824 / 0.816 with it on the slow path; on both paths 0.827 / 0.809 / 0.820.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING
from uuid import UUID

from pgvector import Vector

from app.db.queries import Q
from app.write.items import embedding_text  # the text the first rail's embedder read for the block

if TYPE_CHECKING:
    from app.db.connector import Database
    from app.models.base import Embedder
    from app.models.calls import ModelCalls
    from app.services import Services

log = logging.getLogger(__name__)

BATCH = 32  # e5: ~3 s of embedding per transaction

@dataclass(slots=True)
class FillReport:
    embedded: int = 0
    vaults: int = 0
    seconds: float = 0.0
    done: bool = True  # False when the time budget ran out with blocks still due

    def as_dict(self) -> dict:
        return {"embedded": self.embedded, "vaults": self.vaults, "seconds": round(self.seconds, 2),
                "done": self.done}


async def fill_vault(db: Database, calls: ModelCalls, embedder: Embedder, vault_id: UUID, *,
                     deadline: float | None = None, batch: int = BATCH) -> tuple[int, bool]:
    """Embed the vault's due blocks, a batch per transaction, each batch in the model pool (``calls``). Returns
    (embedded, finished)."""
    done = 0
    while True:
        if deadline is not None and time.monotonic() >= deadline:
            return done, False
        rows = await db.fetchall(Q.rail2_due, {"vault": vault_id, "model": embedder.name, "n": batch},
                                 vault_id=vault_id)
        if not rows:
            return done, True
        texts = [embedding_text(r["context"], r["normalized"]) for r in rows]
        vecs = await calls.embed_documents(embedder, texts)
        async with db.transaction(vault_id) as conn:
            await conn.execute(Q.rail2_put, {"vault": vault_id, "model": embedder.name,
                                         "ids": [r["id"] for r in rows], "hashes": [r["content_hash"] for r in rows],
                                         "vecs": [Vector(v).to_text() for v in vecs]})
        done += len(rows)


async def fill(services: Services, *, vault_id: UUID | None = None, budget_s: float | None = None) -> FillReport:
    """Bring the second rail up to date: one vault, or every vault with due blocks, within ``budget_s``."""
    report = FillReport()
    embedder = services.rail2
    if embedder is None:
        return report
    t0 = time.monotonic()
    deadline = t0 + budget_s if budget_s is not None else None
    if vault_id is not None:
        vaults = [vault_id]
    else:
        vaults = [r["id"] for r in await services.db.fetchall(Q.rail2_vaults_due, {"model": embedder.name})]
    for vid in vaults:
        n, finished = await fill_vault(services.db, services.models, embedder, vid, deadline=deadline)
        report.embedded += n
        report.vaults += 1 if n else 0
        if not finished:
            report.done = False
            break
    report.seconds = time.monotonic() - t0
    return report


async def search_params(services: Services, query: str) -> dict:
    """fast_search_v1's keys for the second rail (the query's vector of that model), or none when it is off. A
    model that fails degrades the search to the two other rails instead of failing the recall."""
    return (await search_params_many(services, [query]))[0]


async def search_params_many(services: Services, queries: list[str]) -> list[dict]:
    """``search_params`` of several queries (the slow path's multi-query variants), embedded in one model call."""
    if services.rail2 is None or not queries:
        return [{} for _ in queries]
    try:
        vecs = await services.models.embed_queries(services.rail2, queries)
    except Exception:  # noqa: BLE001 - any model failure: search on without the rail
        log.warning("second rail: %s could not embed the query; searching without it", services.rail2.name,
                    exc_info=True)
        return [{} for _ in queries]
    return [{"qvec2": Vector(v).to_text(), "rail2_model": services.rail2.name} for v in vecs]
