"""``POST /v1/vaults/{vault}/recall``: a thin controller, one service call (``recall``)."""

from __future__ import annotations

from litestar import Controller, get, post

from app.api.body import IsoTime
from app.read.config import RecallOptions
from app.read.recall import recall
from app.read.schemas import RecallIn, RecallOut, RecallStatsOut
from app.services import Services
from app.vaults import Vault


class RecallController(Controller):
    path = "/v1/vaults/{vault:str}/recall"
    tags = ["recall"]

    @post("/", summary="Recall memories for a query: cards, cascade_cards and meta", status_code=200,
          opt={"scope": "read", "standby": True})
    async def recall(self, vault: str, data: RecallIn, services: Services, v: Vault) -> RecallOut:
        result = await recall(services, v, data.query, RecallOptions(
            format=data.format, token_budget=data.token_budget, as_of=data.as_of, known_at=data.known_at,
            thinking=data.thinking, k=data.k, session_id=data.session_id, funnel=data.funnel))
        return RecallOut(**result.render(), meta=result.meta)

    @get("/stats", summary="This vault's read-track counters: gate skips, breaker trips, blends, prefetch hits and "
         "misses")
    async def stats(self, vault: str, services: Services, v: Vault) -> RecallStatsOut:
        breakers = {k: b for k, b in services.breakers.snapshot().items() if k.startswith("read.")}
        return RecallStatsOut(vault=v.name, counters=services.read_counters.snapshot(v.id), breakers=breakers)
