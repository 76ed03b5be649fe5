"""What a vault holds, over REST: memories listed with filters, one memory edited, feedback on a memory, sessions
and their turns, entities and an entity's neighbourhood in the knowledge graph. Every list is a cursor page
(``app.api.pagination``); the SQL is in ``sql/idempotent/096-browse.sql`` and ``095-feedback.sql``."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from litestar import Controller, get
from litestar.openapi.spec import Example
from litestar.params import Body, Parameter

from app.api.errors import ERROR_RESPONSES
from app.api.pagination import BIGINT, CURSOR, decode_cursor, limit_param, page
from app.api.schemas import (  # noqa: F401  (Kind, State, Tier: write/api.py's filters read them from here)
    EntityItem,
    Kind,
    MemoryItem,
    MemoryPatch,
    Neighbourhood,
    Page,
    Relation,
    SessionItem,
    State,
    Tier,
    TurnItem,
)
from app.db.queries import Q
from app.read.sanitize import ReadSanitizer
from app.errors import InvalidInput, NotFound
from app.services import Services
from app.vaults import Vault
from app.write.schemas import MemoryOut

PATCH_BODY = Body(examples=[
    Example(summary="Reclassify", value={"category": "Decision", "confidence": 0.95}),
    Example(summary="No longer true", value={"invalid_at": "2026-03-01T00:00:00Z",
                                             "metadata": {"reason": "moved away"}})])
FEEDBACK_BODY = Body(examples=[Example(summary="It helped", value={"signal": "+"}),
                               Example(summary="It did not", value={"signal": "-", "note": "outdated"})])





async def list_memories(services: Services, v: Vault, filters: dict[str, Any], limit: int,
                        cursor: str | None) -> Page[MemoryItem]:
    from psycopg.types.json import Jsonb

    after = decode_cursor("memories", cursor)
    given = {k: (x.isoformat() if isinstance(x, datetime) else x) for k, x in filters.items() if x is not None}
    rows = await services.db.fetchall(Q.list_blocks,
                                      (Jsonb(given), after[0] if after else None, limit + 1), vault_id=v.id)
    return page("memories", rows, limit, lambda r: [r["id"]], MemoryItem.model_validate)


async def edit_memory(services: Services, v: Vault, block_id: int, data: MemoryPatch) -> MemoryOut:
    from psycopg.types.json import Jsonb

    from app.write.memories import get_memory

    changes = data.model_dump(mode="json", exclude_unset=True)
    if not changes:
        raise InvalidInput("nothing to change: the body has no field",
                           hint="send one of category, confidence, tier, valid_at, invalid_at, metadata")
    await services.db.fetchone(Q.patch_block, (block_id, Jsonb(changes)), vault_id=v.id)
    return MemoryOut.model_validate(await get_memory(services, v, block_id))


async def list_turns(services: Services, v: Vault, session: str, limit: int, cursor: str | None
                     ) -> Page[TurnItem]:
    after = decode_cursor("turns", cursor)
    rows = await services.db.fetchall(Q.list_turns,
                                      (session, after[0] if after else None, limit + 1), vault_id=v.id)
    if not rows and after is None and not await services.db.fetchone(
            Q.session_exists, (v.id, session), vault_id=v.id):
        raise NotFound(f"no session {session!r} in vault {v.name!r}",
                       hint="list the vault's sessions: GET /v1/vaults/{vault}/sessions")
    sanitizer = ReadSanitizer()
    shown = [_sanitized_turn(sanitizer, r) for r in rows[:limit]] + rows[limit:]  # the extra row: the next page's
    if sanitizer.audits:
        await services.db.fetchone(Q.audit_read_sanitize, (json.dumps(sanitizer.audits),), vault_id=v.id)
    return page("turns", shown, limit, lambda r: [r["seq"]], TurnItem.model_validate)


def _sanitized_turn(sanitizer: ReadSanitizer, row: dict) -> dict:
    """A turn as the agent may read it: what recall would redact of it as a memory, redacted here too (a turn the
    write gates refused as a memory is still archived as said)."""
    from app.safety.directive import judge

    before = len(sanitizer.audits)
    content = sanitizer(None, row["content"], where="turns")
    for audit in sanitizer.audits[before:]:
        audit["detail"]["turn_id"] = row["id"]
    return {**row, "content": content, "redacted": content != row["content"],
            "instruction_like": judge(row["content"]).directive}


class SessionListController(Controller):
    path = "/v1/vaults/{vault:str}/sessions"
    tags = ["sessions"]

    @get("/", summary="List sessions, the most recently active first", responses=ERROR_RESPONSES,
         opt={"standby": True})
    async def list_sessions(self, vault: str, services: Services, v: Vault,
                            open: bool | None = Parameter(default=None, description="true: open sessions only; "
                                                                                     "false: closed ones only."),
                            limit: int = limit_param(50), cursor: str | None = CURSOR) -> Page[SessionItem]:
        after = decode_cursor("sessions", cursor) or [None, None]
        rows = await services.db.fetchall(Q.list_sessions,
                                          (after[0], after[1], limit + 1, open), vault_id=v.id)
        return page("sessions", rows, limit, lambda r: [r["last_turn_at"].isoformat(), r["id"]],
                    SessionItem.model_validate)


class EntityController(Controller):
    path = "/v1/vaults/{vault:str}/entities"
    tags = ["graph"]

    @get("/", summary="List the knowledge graph's entities, the most mentioned first", responses=ERROR_RESPONSES,
         opt={"standby": True})
    async def list_entities(self, vault: str, services: Services, v: Vault,
                            contains: str | None = Parameter(default=None, max_length=200,
                                                             description="Text in the name or an alias."),
                            limit: int = limit_param(50), cursor: str | None = CURSOR) -> Page[EntityItem]:
        after = decode_cursor("entities", cursor) or [None, None]
        rows = await services.db.fetchall(Q.list_entities,
                                          (contains, after[0], after[1], limit + 1), vault_id=v.id)
        return page("entities", rows, limit, lambda r: [r["mention_count"], r["id"]], EntityItem.model_validate)

    @get("/{entity:str}/neighbourhood", summary="An entity's relations up to `hops` away (AGE graph walk)",
         responses=ERROR_RESPONSES, opt={"standby": True})
    async def neighbourhood(self, vault: str, entity: str, services: Services, v: Vault,
                            hops: int = Parameter(default=1, ge=1, le=3, description="How far to walk (1-3)."),
                            as_of: datetime | None = Parameter(default=None, description="Relations valid then "
                                                                                          "(default now)."),
                            max_edges: int = Parameter(default=200, ge=1, le=2000)) -> Neighbourhood:
        found = await find_entity(services, v, entity)
        rows = await services.db.fetchall(Q.entity_neighbourhood,
                                          (found["id"], hops, as_of, max_edges), vault_id=v.id)
        return Neighbourhood(entity=EntityItem.model_validate(found),
                             relations=[Relation.model_validate(r) for r in rows])


async def find_entity(services: Services, vault, entity: str) -> dict:
    """An entity by id (ASCII digits that fit a bigint) or by name or alias (folded as the write track folds
    names). Other digits ('²', '①', Arabic-Indic '١') and longer numbers are names, never ids."""
    from app.write.entities import canonical_key

    entity_id = int(entity) if entity.isascii() and entity.isdigit() and len(entity) <= 19 else None
    if entity_id is not None and entity_id > BIGINT:
        entity_id = None
    row = await services.db.fetchone(Q.find_entity,
                                     (entity_id, canonical_key(entity)), vault_id=vault.id)
    if row is None:
        raise NotFound(f"no entity {entity!r} in vault {vault.name!r}",
                       hint="list the vault's entities: GET /v1/vaults/{vault}/entities?contains=...")
    return row
