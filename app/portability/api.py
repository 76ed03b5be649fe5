"""``GET /v1/vaults/{vault}/export`` (JSONL, streamed) and ``POST /v1/vaults/{vault}/import`` (a new vault from an
export): thin controllers over :mod:`app.portability`."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, get, post
from litestar.params import Parameter
from litestar.response import Stream
from pydantic import BaseModel

from app.api.errors import ERROR_RESPONSES
from app.portability import export_vault, import_vault
from app.services import Services
from app.vaults import Vault, get_vault

MEDIA_TYPE = "application/x-ndjson"


class ImportOut(BaseModel):
    vault: str
    source_vault: str | None
    counts: dict[str, Any]
    reembedded: int
    notes: list[str]


class PortabilityController(Controller):
    path = "/v1/vaults/{vault:str}"
    tags = ["export and import"]

    @get("/export", summary="Export the vault as JSON lines: a header (format version, embedder), then sessions, "
         "turns, memories with their history and sources, entities, triples, and an end line with the counts",
         media_type=MEDIA_TYPE, response_description="JSON lines", responses=ERROR_RESPONSES)
    async def export(self, vault: str, services: Services, v: Vault,
                     embeddings: bool = Parameter(query="embeddings", default=False, required=False,
                                                  description="include the vectors (else re-embedded on import)")
                     ) -> Stream:
        return Stream(export_vault(services, v, embeddings=embeddings), media_type=MEDIA_TYPE,
                      headers={"Content-Disposition": f'attachment; filename="{v.name}.memvault.jsonl"'})

    @post("/import", summary="Create this vault from an export (JSON lines in the body; the vault must not exist): "
          "ids are kept, missing vectors are embedded, the knowledge graph is rebuilt; all or nothing",
          status_code=201, opt={"scope": "admin"}, request_max_body_size=None, responses=ERROR_RESPONSES)
    async def import_(self, vault: str, request: Request, services: Services) -> ImportOut:
        limit = services.settings.max_import_bytes
        report = await import_vault(services, vault, _bounded(request.stream(), limit))
        return ImportOut(vault=report.vault, source_vault=report.source_vault, counts=report.counts,
                         reembedded=report.reembedded, notes=report.notes)


async def _bounded(stream, limit: int):
    from app.errors import PayloadTooLarge

    total = 0
    async for chunk in stream:
        total += len(chunk)
        if total > limit:
            raise PayloadTooLarge(f"the import is larger than {limit} bytes",
                                  hint="raise MEMVAULT_MAX_IMPORT_BYTES, or use `memvault import` on the server")
        yield chunk
