"""``memvault import``: a foreign export into a vault, as sessions through the write track, resumably.

Each conversation becomes the session ``<format>:<its id in the export>``. A re-run (after an interruption, or of a
newer export of the same account) looks the sessions up first and skips the turns they already hold, so nothing
is written twice: an import is resumable at the granularity of one batch of the bulk path (each commits on its own).
Turns keep their original times: the valid time of the memories made from them.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.db.queries import Q
from app.importers import Conversation, ImportTurn
from app.importers.detect import FORMATS, _json, detect, read_bytes

if TYPE_CHECKING:
    from app.services import Services
    from app.vaults import Vault



@dataclass
class ImportReport:
    format: str
    vault: str
    conversations: int = 0
    sessions_new: int = 0
    sessions_resumed: int = 0
    sessions_complete: int = 0  # already fully in the vault: skipped
    turns_written: int = 0
    turns_skipped: int = 0
    decisions: Counter = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)


def session_id(fmt: str, source_id: str) -> str:
    sid = f"{fmt}:{source_id}"
    if len(sid) <= 200:
        return sid
    return f"{fmt}:{hashlib.sha256(source_id.encode()).hexdigest()[:32]}"  # the column holds 200 characters


def read_conversations(path: Path, fmt: str | None = None, *, branches: bool = False) -> tuple[str, list[Conversation]]:
    from app.errors import InvalidInput
    from app.importers import benchsets, chatgpt, claude, jsonl

    raw = read_bytes(path)
    fmt = fmt or detect(raw, str(path))
    if fmt not in FORMATS:
        raise InvalidInput(f"unknown format {fmt!r}", hint="one of " + ", ".join(FORMATS))
    if fmt == "memvault":
        return fmt, []
    if fmt == "jsonl":
        mtime = datetime.fromtimestamp(path.stat().st_mtime, UTC)
        return fmt, jsonl.read(raw, default_time=mtime)
    if fmt in ("locomo", "longmemeval"):
        reader = benchsets.read_locomo if fmt == "locomo" else benchsets.read_longmemeval
        return fmt, reader(path)
    data = _json(raw)
    if data is None:
        raise InvalidInput(f"{path}: not JSON", hint=f"a {fmt} export is the conversations.json of its zip")
    return fmt, (chatgpt.read if fmt == "chatgpt" else claude.read)(data, branches=branches)


async def write_sessions(services: Services, vault: Vault, sessions: Sequence[tuple[str, Sequence[ImportTurn]]],
                         progress: Callable[[int], Any] | None = None) -> Counter:
    """The one place an import writes: the write track's bulk path (``app.write.bulk``: archived, chunked, gated,
    deduplicated, in batches that commit one by one while the next is screened). The decisions its chunks got
    come back."""
    from app.write.bulk import BulkIngest, SessionIn
    from app.write.sessions import TurnIn

    results = await BulkIngest(services).sessions(
        vault, [SessionIn(sid, [TurnIn(t.role, t.content, t.said_at) for t in turns]) for sid, turns in sessions],
        progress=progress)
    return Counter(r.decision for result in results for r in result.chunks)


async def import_conversations(services: Services, vault: Vault, fmt: str, conversations: list[Conversation], *,
                               progress: Callable[[int], Any] | None = None,
                               total: Callable[[int], Any] | None = None) -> ImportReport:
    report = ImportReport(fmt, vault.name, conversations=len(conversations))
    ids = [session_id(fmt, c.source_id) for c in conversations]
    rows = await services.db.fetchall(Q.session_turn_counts, (vault.id, ids), vault_id=vault.id)
    held = {r["id"]: r["turn_count"] for r in rows}
    todo = [(sid, c.turns[held.get(sid, 0):]) for sid, c in zip(ids, conversations, strict=True)]
    report.turns_skipped = sum(min(held.get(sid, 0), len(c.turns)) for sid, c in zip(ids, conversations,
                                                                                     strict=True))
    if total:
        total(sum(len(t) for _, t in todo))
    for sid, turns in todo:
        if not turns:
            report.sessions_complete += 1
        elif sid in held:
            report.sessions_resumed += 1
        else:
            report.sessions_new += 1
    pending = [(sid, turns) for sid, turns in todo if turns]
    report.decisions = await write_sessions(services, vault, pending, progress)
    report.turns_written = sum(len(turns) for _, turns in pending)
    return report
