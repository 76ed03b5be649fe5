"""Importers of foreign chat exports into a vault (``memvault import --vault V FILE``): ChatGPT's and Claude's
``conversations.json``, LoCoMo and LongMemEval files, plain JSON lines of turns. memvault's own export is detected
too and handed to its own importer (``app.portability``).

Each format's reader (one module each) turns a file into ``Conversation``s: a stable source id, a title and the
turns with their original times (which become the memories' valid time). ``app.importers.run`` writes them as
sessions through the write track, resumably.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class ImportTurn:
    role: str  # user, assistant, system, tool
    content: str
    said_at: datetime


@dataclass(frozen=True, slots=True)
class Conversation:
    source_id: str  # the export's own id for it: with the format, the vault's session id (so a re-run resumes)
    title: str | None
    turns: tuple[ImportTurn, ...]
