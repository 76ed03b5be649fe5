"""Write-track endpoints: memories (one or a batch), session turns and close, one memory with history."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from litestar import Controller, Request, delete, get, patch, post
from litestar.params import Body, Parameter

from app.auth import Principal
from app.services import Services
from app.vaults import Vault, get_vault
from app.write import idempotency
from app.write.items import WriteItem
from app.write.memories import get_memory, purge_memory, retract_memory
from app.api import browse
from app.api.errors import ERROR_RESPONSES
from app.api.pagination import CURSOR, Page, limit_param
from app.write.schemas import (
    Category,
    CloseOut,
    FeedbackIn,
    FeedbackOut,
    ItemOut,
    MemoryBatchIn,
    MemoryWriteIn,
    MemoryOut,
    TurnsIn,
    TurnsOut,
    WriteOut,
)

MEMORY_BODY = Body(description="One memory, or a batch of them under `items`.")
IDEMPOTENCY = Parameter(header="Idempotency-Key", required=False, min_length=1, max_length=200,
                        description="Retrying with the same key writes once and returns the first answer.")


def _items_out(results) -> list[dict]:
    return [ItemOut(**r.as_dict()).model_dump(mode="json") for r in results]


class MemoryController(Controller):
    path = "/v1/vaults/{vault:str}/memories"
    tags = ["memories"]

    @post("/", summary="Remember one memory or a batch; each item's decision and reasons come back",
          status_code=200)
    async def create(self, vault: str, request: Request, services: Services,
                     data: Annotated[MemoryWriteIn, MEMORY_BODY],
                     idempotency_key: str | None = IDEMPOTENCY) -> WriteOut:
        body = await request.json()  # the decoded body (app.api.body), for the idempotency digest
        parsed = data.root
        items_in = parsed.items if isinstance(parsed, MemoryBatchIn) else [parsed]
        v = await get_vault(services.db, vault)
        digest = idempotency.request_hash("POST", request.url.path, body)
        if (stored := await idempotency.replay(services, v, idempotency_key, digest)) is not None:
            return WriteOut.model_validate(stored)
        now = datetime.now(UTC)
        items = [WriteItem(content=m.content, said_at=m.said_at or now, source_kind=m.source_kind,
                           category=m.category, confidence=m.confidence, session_id=m.session_id,
                           metadata=m.metadata) for m in items_in]
        hook = idempotency.recorder(v, idempotency_key, digest, lambda rs: {"results": _items_out(rs)})
        try:
            results = await services.write.remember(v, items, hook=hook)
        except idempotency.Raced:  # the same request, sent twice at once: the first one's answer
            if (stored := await idempotency.replay(services, v, idempotency_key, digest)) is None:
                raise
            return WriteOut.model_validate(stored)
        return WriteOut.model_validate({"results": _items_out(results)})

    @get("/", summary="List memories, newest first, with filters (a cursor page)", responses=ERROR_RESPONSES,
         opt={"standby": True})
    async def list(
        self, vault: str, services: Services, v: Vault,
        category: Category | None = None, kind: browse.Kind | None = None,
        session: str | None = Parameter(default=None, description="Only this session's memories."),
        source_kind: str | None = None, tier: browse.Tier | None = None,
        which: browse.State = Parameter(query="state", default="current", description="current (default): neither superseded "
                                        "nor deleted; superseded; retracted (deleted); all."),
        contains: str | None = Parameter(default=None, max_length=200,
                                         description="Text in the content (case-insensitive)."),
        valid_from: datetime | None = Parameter(default=None, description="Valid time overlaps [valid_from, ...)."),
        valid_to: datetime | None = Parameter(default=None, description="Valid time overlaps [..., valid_to)."),
        recorded_from: datetime | None = Parameter(default=None,
                                                   description="Recorded at or after (transaction time)."),
        recorded_to: datetime | None = Parameter(default=None, description="Recorded before (transaction time)."),
        limit: int = limit_param(50), cursor: str | None = CURSOR,
    ) -> Page[browse.MemoryItem]:
        return await browse.list_memories(services, v, {
            "category": category, "kind": kind, "session_id": session, "source_kind": source_kind, "tier": tier,
            "state": which, "contains": contains, "valid_from": valid_from, "valid_to": valid_to,
            "recorded_from": recorded_from, "recorded_to": recorded_to}, limit, cursor)

    @patch("/{block_id:int}", summary="Edit a memory's category, confidence, tier, valid time or metadata "
                                      "(earlier values stay in its history)", responses=ERROR_RESPONSES)
    async def edit(self, vault: str, block_id: int, services: Services, v: Vault,
                   data: Annotated[browse.MemoryPatch, browse.PATCH_BODY]) -> MemoryOut:
        return await browse.edit_memory(services, v, block_id, data)

    @post("/{block_id:int}/feedback", summary="Feedback on a memory: '+' it helped, '-' it did not",
          status_code=200, responses=ERROR_RESPONSES)
    async def feedback(self, vault: str, block_id: int, services: Services, v: Vault,
                       data: Annotated[FeedbackIn, browse.FEEDBACK_BODY]) -> FeedbackOut:
        from app.write.memories import feedback_memory

        return FeedbackOut.model_validate(await feedback_memory(services, v, block_id, data.value, note=data.note))

    @get("/{block_id:int}", summary="One memory, with its earlier versions and every place it was said",
         responses=ERROR_RESPONSES, opt={"standby": True})
    async def show(self, vault: str, block_id: int, services: Services, v: Vault) -> MemoryOut:
        row = await get_memory(services, v, block_id)
        return MemoryOut.model_validate(row)

    @delete("/{block_id:int}", summary="Delete a memory: soft by default (retracted: no longer recalled or "
            "listed, kept in its history); ?purge=true erases it with the turns it was said in and every copy",
            responses=ERROR_RESPONSES)
    async def remove(self, vault: str, block_id: int, services: Services, v: Vault, principal: Principal,
                     purge: bool = Parameter(query="purge", default=False, required=False,
                                             description="true: erase for good (needs an admin key)")) -> None:
        if purge:
            principal.require(vault, "admin")  # a write key retracts; erasing takes an admin key
            await purge_memory(services, v, block_id)
        else:
            await retract_memory(services, v, block_id)


class SessionController(Controller):
    path = "/v1/vaults/{vault:str}/sessions/{session:str}"
    tags = ["sessions"]

    @post("/turns", summary="Append conversation turns (archived, chunked and written as memories)",
          status_code=200)
    async def turns(self, vault: str, session: str, request: Request, services: Services, data: TurnsIn,
                    idempotency_key: str | None = IDEMPOTENCY) -> TurnsOut:
        from app.write.sessions import TurnIn

        body = await request.json()  # the decoded body (app.api.body), for the idempotency digest
        v = await get_vault(services.db, vault)
        digest = idempotency.request_hash("POST", request.url.path, body)
        if (stored := await idempotency.replay(services, v, idempotency_key, digest)) is not None:
            return TurnsOut.model_validate(stored)
        now = datetime.now(UTC)
        turns = [TurnIn(t.role, t.content, t.said_at or now) for t in data.turns]
        hook = idempotency.recorder(v, idempotency_key, digest, lambda r: _turns_out(r).model_dump(mode="json"))
        try:
            result = await services.sessions.append_turns(v, session, turns, hook=hook)
        except idempotency.Raced:  # the same request, sent twice at once: the first one's answer
            if (stored := await idempotency.replay(services, v, idempotency_key, digest)) is None:
                raise
            return TurnsOut.model_validate(stored)
        return _turns_out(result)

    @get("/turns", summary="A session's turns in the order they were said (a cursor page)",
         responses=ERROR_RESPONSES, opt={"standby": True})
    async def list_turns(self, vault: str, session: str, services: Services, v: Vault,
                         limit: int = limit_param(100),
                         cursor: str | None = CURSOR) -> Page[browse.TurnItem]:
        return await browse.list_turns(services, v, session, limit, cursor)

    @post("/close", summary="Close a session: atomic units, a summary and a thread map", status_code=200)
    async def close(self, vault: str, session: str, services: Services, v: Vault) -> CloseOut:
        result = await services.sessions.close(v, session)
        return CloseOut(session_id=result.session_id, units=[ItemOut(**r.as_dict()) for r in result.units],
                        summary_block_id=result.summary_block_id, summary_words=result.summary_words,
                        thread_map=result.thread_map, segment=result.segment)


def _turns_out(result) -> TurnsOut:
    return TurnsOut(session_id=result.session_id, turn_ids=list(result.turn_ids),
                    chunks=[ItemOut(**r.as_dict()) for r in result.chunks], reopened=result.reopened)
