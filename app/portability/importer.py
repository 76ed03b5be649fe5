"""Import a memvault export into a new vault: lines are checked and staged with COPY in a temporary table, vectors
that are missing (or from another embedder) are computed, then memvault.import_staged_v1 fills the vault's
tables and rebuilds its graph, all in one transaction: an import is whole or nothing."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterable, AsyncIterator, Iterable
from dataclasses import dataclass, field
from typing import Any

from app import strict_json
from app.db.queries import Q
from app.errors import Conflict, InvalidInput
from app.portability.format import KINDS, VERSION, is_memvault_export
from app.services import Services
from app.vaults import check_name
from app.write.items import embedding_text

EMBED_BATCH = 256
Source = Iterable[str | bytes] | AsyncIterable[str | bytes]


@dataclass(frozen=True, slots=True)
class ImportReport:
    vault: str
    source_vault: str | None
    counts: dict[str, Any]
    reembedded: int = 0
    notes: list[str] = field(default_factory=list)


async def _lines(source: Source) -> AsyncIterator[tuple[int, str]]:
    """(line number, text) of each non-empty line, from lines or from arbitrary byte chunks (an HTTP body)."""
    async def chunks() -> AsyncIterator[str | bytes]:
        if isinstance(source, AsyncIterable):
            async for c in source:
                yield c
        else:
            for c in source:
                yield c

    buf, n = b"", 0
    async for chunk in chunks():
        buf += chunk.encode() if isinstance(chunk, str) else chunk
        *complete, buf = buf.split(b"\n")
        for raw in complete:
            n += 1
            if raw.strip():
                yield n, _decode(raw, n)
    if buf.strip():
        yield n + 1, _decode(buf, n + 1)


def _decode(raw: bytes, n: int) -> str:
    try:
        return raw.decode("utf-8").strip()
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"line {n}: not UTF-8 ({exc.reason} at byte {exc.start})",
                           hint="an export is UTF-8 JSON lines") from exc


def _parse(text: str, n: int) -> dict:
    try:
        obj = strict_json.loads(text)
    except (strict_json.NotStrictJSON, RecursionError) as exc:
        raise InvalidInput(f"line {n} {exc or 'is nested too deeply'}",
                           hint="an export has one JSON object per line") from exc
    if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
        raise InvalidInput(f"line {n}: not an object with a 'type'", hint="an export has one JSON object per line")
    if "\\u0000" in text:
        raise InvalidInput(f"line {n}: contains a NUL character (\\u0000)", hint="PostgreSQL text cannot hold it")
    return obj


async def import_vault(services: Services, name: str, source: Source) -> ImportReport:
    """Re-create a vault named ``name`` (it must not exist) from an export's lines."""
    check_name(name)
    if await services.db.fetchone(Q.vault_name_taken, (name,)):
        raise Conflict(f"vault {name!r} already exists", hint="import into a new name, or purge that vault first")
    embedder = services.embedder
    async with services.db.transaction() as conn:
        await conn.execute(Q.import_stage_table)
        header, end, counts = await _stage(conn, source)
        notes: list[str] = []
        if end is None:
            raise InvalidInput("the export ends without its 'end' line: it is truncated",
                               hint="export it again; nothing was imported")
        if (expected := end.get("counts") or {}) != counts:
            raise InvalidInput(f"the export's rows {counts} do not match its 'end' line {expected}",
                               hint="the file was cut or edited; nothing was imported")
        same_model = header.get("embedder") == embedder.name and header.get("dim") == embedder.dim
        if not same_model and header.get("embeddings"):
            await conn.execute(Q.import_drop_vectors)
            notes.append(f"vectors of {header.get('embedder')!r} dropped: re-embedded with {embedder.name!r}")
        reembedded = await _embed_missing(conn, embedder)
        cur = await conn.execute(Q.create_vault_id, (name,))
        vault_id = (await cur.fetchone())["id"]
        await conn.execute(Q.scope_to_vault, (str(vault_id),))  # the rest of the import is that vault's
        cur = await conn.execute(Q.import_staged, (vault_id,))
        result = (await cur.fetchone())["counts"]
        await conn.execute(Q.audit, (vault_id, json.dumps([{
            "action": "vault.import", "actor": "api", "detail": {"counts": result, "reembedded": reembedded,
                                                                 "source_vault": header.get("vault")}}])))
    return ImportReport(vault=name, source_vault=header.get("vault"), counts=result, reembedded=reembedded,
                        notes=notes)


async def _stage(conn, source: Source) -> tuple[dict, dict | None, dict[str, int]]:
    header: dict | None = None
    end: dict | None = None
    counts: dict[str, int] = {}
    async with conn.cursor().copy(Q.import_copy) as copy:
        async for n, text in _lines(source):
            if header is None:
                if not is_memvault_export(text):
                    raise InvalidInput("line 1 is not a memvault export header",
                                       hint='an export starts with {"type": "header", "format": "memvault-export"}')
                header = strict_json.loads(text)
                if not isinstance(header.get("version"), int) or header["version"] > VERSION:
                    raise InvalidInput(f"export format version {header.get('version')!r} is newer than this "
                                       f"memvault reads ({VERSION})", hint="upgrade memvault")
                continue
            if end is not None:
                raise InvalidInput(f"line {n}: data after the 'end' line", hint="one export per file")
            obj = _parse(text, n)
            kind = obj["type"]
            if kind == "end":
                end = obj
                continue
            if kind not in KINDS:
                raise InvalidInput(f"line {n}: unknown type {kind!r}", hint=f"one of {', '.join(KINDS)}")
            counts[kind] = counts.get(kind, 0) + 1
            await copy.write_row((kind, n, text))
    if header is None:
        raise InvalidInput("the export is empty", hint="nothing to import")
    return header, end, counts


async def _embed_missing(conn, embedder) -> int:
    """Vectors for the blocks and entities that came without one: the text the write track embeds."""
    cur = await conn.execute(
        Q.import_texts_due)
    rows = await cur.fetchall()
    for i in range(0, len(rows), EMBED_BATCH):
        batch = rows[i:i + EMBED_BATCH]
        texts = [r["name"] if r["kind"] == "entity" else embedding_text(r["context"], r["normalized"]) for r in batch]
        vectors = await asyncio.to_thread(embedder.embed_documents, texts)
        await conn.execute(
            Q.import_set_vectors, ([r["ord"] for r in batch], list(vectors)))
    return len(rows)
