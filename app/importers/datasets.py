"""Loaders for the public conversation sets LoCoMo and LongMemEval, any split, by path (formats: the sets' README).

Production code: ``memvault import`` reads these files (app/importers/benchsets.py), and the benchmarks
(``app/bench``) read them through here too; production code never imports the benchmarks.

- LongMemEval: a JSON list (plain or gzip) of questions, each with its own haystack of dated sessions.
- LoCoMo: a JSON list of conversations; ``conversation`` holds ``session_N`` turn lists beside their
  ``session_N_date_time``; ``qa`` items carry evidence dialog ids ``D<session>:<turn>`` and a category.

Dates become timezone-aware datetimes in UTC (the sets give wall-clock times without a zone).
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

_MONTHS = {m: i for i, m in enumerate(
    ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
     "november", "december"), start=1)}
_LOCOMO_DATE = re.compile(
    r"^\s*(\d{1,2}):(\d{2})\s*([ap])\.?\s*m\.?\s+on\s+(\d{1,2})\s+([A-Za-z]+)\.?,?\s+(\d{4})\s*$", re.I)
_LME_DATE = re.compile(r"^\s*(\d{4})/(\d{1,2})/(\d{1,2})\s*(?:\([A-Za-z]+\))?\s*(?:(\d{1,2}):(\d{2}))?\s*$")
_EVIDENCE = re.compile(r"D(\d+):(\d+)")


class DataFormatError(ValueError):
    """The file is not in the format its loader expects."""


# --- dates --------------------------------------------------------------------------------------------------

def _month(name: str) -> int:
    key = name.lower()
    for full, number in _MONTHS.items():
        if full == key or (len(key) >= 3 and full.startswith(key)):
            return number
    raise DataFormatError(f"unknown month {name!r}")


def parse_written_date(text: str) -> datetime | None:
    """A session date written any way people write one, with its year ("8 May 2023, 1:56 pm", "May 8, 2023 at
    1:56 PM", "2023-05-08 13:56", "2023年5月8日 下午1:56"...): the write track's TemporalNormalizer reads it, so
    the benchmark files and the memories share one reading of dates. None when it names no day of a year."""
    from app.write.normalize.temporal import TemporalNormalizer

    for span in TemporalNormalizer().find(text, datetime(2000, 1, 1, tzinfo=UTC)):
        value = str(span.value)
        if not re.search(r"(?<!\d)\d{4}(?!\d)|年", span.surface) or not re.fullmatch(r"\d{4}-\d{2}-\d{2}(T\d{2}:\d{2})?",
                                                                                     value):
            continue  # a date without its year would be resolved against an arbitrary reference
        return datetime.fromisoformat(value).replace(tzinfo=UTC)
    return None


def parse_locomo_date(text: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` -> 2023-05-08 13:56 UTC; other ways of writing a date with its year are read
    by :func:`parse_written_date`."""
    m = _LOCOMO_DATE.match(text)
    if not m:
        if (written := parse_written_date(text)) is not None:
            return written
        raise DataFormatError(f"not a LoCoMo date: {text!r}")
    hour, minute, ampm, day, month, year = m.groups()
    h = int(hour) % 12 + (12 if ampm.lower() == "p" else 0)
    return datetime(int(year), _month(month), int(day), h, int(minute), tzinfo=UTC)


def parse_longmemeval_date(text: str) -> datetime:
    """``"2023/05/20 (Sat) 02:21"`` -> 2023-05-20 02:21 UTC (the weekday is ignored; the time is optional)."""
    m = _LME_DATE.match(text)
    if not m:
        if (written := parse_written_date(text)) is not None:
            return written
        raise DataFormatError(f"not a LongMemEval date: {text!r}")
    year, month, day, hour, minute = m.groups()
    return datetime(int(year), int(month), int(day), int(hour or 0), int(minute or 0), tzinfo=UTC)


# --- shared shapes ------------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Turn:
    role: str  # "user" or "assistant" (LoCoMo: both speakers are people, so both are "user")
    content: str
    dia_id: str | None = None  # LoCoMo dialog id, "D<session>:<turn>"
    speaker: str | None = None
    has_answer: bool = False


@dataclass(frozen=True, slots=True)
class Session:
    id: str  # unique within its file's haystack / conversation: the vault's session id
    date: datetime
    turns: tuple[Turn, ...]
    source_id: str | None = None  # the file's own id when it named two sessions alike (``id`` is then suffixed)

    @property
    def file_id(self) -> str:
        """The id the file gives this session (what its answer ids name)."""
        return self.source_id or self.id


def distinct_session_ids(sessions: Sequence[Session]) -> tuple[Session, ...]:
    """A file that reuses a session id for two sessions means two sessions (LongMemEval_S has haystacks that do):
    the second keeps the file's id as ``source_id`` and is written as ``<id>#2`` (``#3``...), so the write
    track sees two sessions, and scoring maps both back to the id the file's answers name."""
    seen: dict[str, int] = {}
    out: list[Session] = []
    taken = {s.id for s in sessions}
    for s in sessions:
        n = seen.get(s.id, 0) + 1
        seen[s.id] = n
        if n == 1:
            out.append(s)
            continue
        new_id = f"{s.id}#{n}"
        while new_id in taken:
            n += 1
            new_id = f"{s.id}#{n}"
        taken.add(new_id)
        out.append(Session(new_id, s.date, s.turns, source_id=s.file_id))
    return tuple(out)


def _read_json(path: str | Path) -> Any:
    p = Path(path)
    raw = p.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise DataFormatError(f"{p}: not JSON ({exc})") from exc


# --- LongMemEval --------------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class LmeQuestion:
    id: str
    type: str
    question: str
    date: datetime
    answer: str
    answer_session_ids: tuple[str, ...]
    sessions: tuple[Session, ...]

    @property
    def abstention(self) -> bool:
        return self.id.endswith("_abs")

    @property
    def turn_count(self) -> int:
        return sum(len(s.turns) for s in self.sessions)


def _lme_question(row: dict[str, Any]) -> LmeQuestion:
    try:
        ids, dates, hay = row["haystack_session_ids"], row["haystack_dates"], row["haystack_sessions"]
        if not (len(ids) == len(dates) == len(hay)):
            raise DataFormatError(f"question {row['question_id']}: haystack ids, dates and sessions differ "
                                  "in length")
        sessions = distinct_session_ids(tuple(
            Session(str(sid), parse_longmemeval_date(date),
                    tuple(Turn(str(t["role"]), str(t["content"]), has_answer=bool(t.get("has_answer")))
                          for t in turns if str(t.get("content", "")).strip()))
            for sid, date, turns in zip(ids, dates, hay, strict=True)))
        return LmeQuestion(str(row["question_id"]), str(row["question_type"]), str(row["question"]),
                           parse_longmemeval_date(row["question_date"]), str(row.get("answer", "")),
                           tuple(str(s) for s in row["answer_session_ids"]), sessions)
    except KeyError as exc:
        raise DataFormatError(f"LongMemEval question without field {exc}") from exc


def load_longmemeval(path: str | Path, limit: int | None = None) -> list[LmeQuestion]:
    rows = _read_json(path)
    if not isinstance(rows, list):
        raise DataFormatError(f"{path}: expected a JSON list of LongMemEval questions")
    rows = rows[:limit] if limit else rows
    return [_lme_question(r) for r in rows]


def per_type(questions: list[LmeQuestion], n: int) -> list[LmeQuestion]:
    """The first ``n`` questions of each type, in file order (a stratified quick run)."""
    seen: dict[str, int] = {}
    out = []
    for q in questions:
        if seen.get(q.type, 0) < n:
            seen[q.type] = seen.get(q.type, 0) + 1
            out.append(q)
    return out


# --- LoCoMo -------------------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class LocomoQA:
    question: str
    answer: str
    evidence: tuple[str, ...]  # dialog ids, "D<session>:<turn>"
    category: int


@dataclass(frozen=True, slots=True)
class LocomoConversation:
    id: str
    speakers: tuple[str, ...]
    sessions: tuple[Session, ...]
    qa: tuple[LocomoQA, ...]

    @property
    def turn_count(self) -> int:
        return sum(len(s.turns) for s in self.sessions)

    def turns_by_dia_id(self) -> dict[str, Turn]:
        return {t.dia_id: t for s in self.sessions for t in s.turns if t.dia_id}


def evidence_ids(raw: Any) -> tuple[str, ...]:
    """Dialog ids from a QA's ``evidence`` list; tolerates items like ``"D8:6; D9:17"``."""
    items = raw if isinstance(raw, list) else [raw] if raw else []
    out: list[str] = []
    for item in items:
        for s, t in _EVIDENCE.findall(str(item)):
            dia = f"D{int(s)}:{int(t)}"
            if dia not in out:
                out.append(dia)
    return tuple(out)


def locomo_turn_text(turn: dict[str, Any]) -> str:
    """What a speaker said, with the caption of an image they shared (the set's own text for it)."""
    text = str(turn.get("text", "")).strip()
    caption = str(turn.get("blip_caption") or "").strip()
    return f"{text} [shares an image: {caption}]" if caption else text


def _session_keys(conv: dict[str, Any]) -> Iterator[tuple[int, str]]:
    """``(number, key)`` of each ``session_N`` list, by number (``session_1`` and ``session_01`` are both
    sessions: two sessions, as the file says)."""
    keys = sorted((int(m.group(1)), k) for k in conv if (m := re.fullmatch(r"session_(\d+)", k)))
    yield from keys


def _locomo_conversation(row: dict[str, Any], index: int) -> LocomoConversation:
    conv = row.get("conversation")
    if not isinstance(conv, dict):
        raise DataFormatError(f"LoCoMo conversation {index}: no 'conversation' object")
    sessions: list[Session] = []
    last: datetime | None = None
    for n, key in _session_keys(conv):
        turns_raw = conv[key]
        if not isinstance(turns_raw, list) or not turns_raw:
            continue
        date_text = conv.get(f"{key}_date_time") or conv.get(f"session_{n}_date_time")
        if date_text:
            date = parse_locomo_date(str(date_text))
        elif last is not None:
            date = last  # an undated session: no later than the one before it
        else:
            raise DataFormatError(f"LoCoMo conversation {index}: session_{n} has no date")
        last = date
        turns = tuple(Turn("user", f"{t.get('speaker', '')}: {locomo_turn_text(t)}".strip(),
                           dia_id=t.get("dia_id"), speaker=t.get("speaker"))
                      for t in turns_raw if locomo_turn_text(t))
        sessions.append(Session(f"session_{n}", date, turns))
    qa = tuple(LocomoQA(str(q.get("question", "")), str(q.get("answer", q.get("adversarial_answer", ""))),
                        evidence_ids(q.get("evidence")), int(q.get("category", 0)))
               for q in row.get("qa", []))
    speakers = tuple(s for s in (conv.get("speaker_a"), conv.get("speaker_b")) if s)
    return LocomoConversation(str(row.get("sample_id", f"conv-{index}")), speakers, distinct_session_ids(sessions),
                              qa)


def load_locomo(path: str | Path, limit: int | None = None) -> list[LocomoConversation]:
    rows = _read_json(path)
    if isinstance(rows, dict):
        rows = [rows]
    if not isinstance(rows, list):
        raise DataFormatError(f"{path}: expected a JSON list of LoCoMo conversations")
    rows = rows[:limit] if limit else rows
    return [_locomo_conversation(r, i) for i, r in enumerate(rows)]
