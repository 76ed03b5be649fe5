"""LoCoMo and LongMemEval files as conversations, read by the loaders the benchmarks share
(``app.importers.datasets``).

LoCoMo: each conversation's sessions, each a session of the vault (``<sample id>/session_N``); both speakers are
people, so their turns go in as ``user`` turns written ``Name: text``, as the README describes. LongMemEval:
every question's haystack sessions, each once (haystacks share sessions; the first copy wins). Turns carry their
session's date: the sets date sessions, not turns.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.importers.datasets import DataFormatError, Session, load_locomo, load_longmemeval
from app.errors import InvalidInput
from app.importers import Conversation, ImportTurn


def read_locomo(path: Path, **_: Any) -> list[Conversation]:
    try:
        conversations = load_locomo(path)
    except DataFormatError as exc:
        raise InvalidInput(f"not a LoCoMo file: {exc}") from exc
    return [_conversation(f"{c.id}/{s.id}", f"{c.id} {s.id}", s) for c in conversations for s in c.sessions]


def read_longmemeval(path: Path, **_: Any) -> list[Conversation]:
    try:
        questions = load_longmemeval(path)
    except DataFormatError as exc:
        raise InvalidInput(f"not a LongMemEval file: {exc}") from exc
    seen: dict[str, Conversation] = {}
    for q in questions:
        for s in q.sessions:
            seen.setdefault(s.id, _conversation(s.id, None, s))
    return list(seen.values())


def _conversation(source_id: str, title: str | None, s: Session) -> Conversation:
    return Conversation(source_id, title, tuple(ImportTurn(t.role, t.content, s.date) for t in s.turns))
