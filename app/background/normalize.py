"""FactNormalizer (seed 004, ``_consolidate``: "the actual merging, replacing, regularizing of formats"): the
stored facts in one form, so the contradiction scan, the lint and recall compare like with like.

- Predicates: every triple's predicate folded and mapped to its canonical name (``normalize_predicates_v1``:
  "Lives In", "resides_in" -> ``lives_in``; the mapping is reference data, ``memvault.predicate_alias``).
- Entities: each name cleaned (Unicode NFKC, whitespace collapsed, stray quotes and trailing punctuation gone,
  a date written out in ISO 8601, read by the write track's date grammar and day_first setting: "May 5th, 2023" ->
  "2023-05-05", "March 2024" -> "2024-03") and keyed with the write track's own ``canonical_key``; an entity
  whose key changes is renamed, and entities that now share a key are merged into the most mentioned one
  (``normalize_entities_v1``, which moves triples and aliases and keeps the AGE graph in step). The entities
  looked at are those created since the last dream (all of them the first time) and those their new keys
  already name.

Both are idempotent: a clean vault gives an empty plan, and a second pass changes nothing.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from app.db.queries import Q
from app.write.entities import canonical_key
from app.write.normalize.temporal import TemporalNormalizer

if TYPE_CHECKING:
    import psycopg

_SPACES = re.compile(r"\s+")
_QUOTES = "\"'“”‘’`«»「」『』"
_TRAILING = re.compile(r"[\s,;:!?]+$")
# Two reference times far apart: a date that names its year reads the same from both, "Friday" or "May 5" not.
_REFERENCES = (datetime(1950, 1, 1, tzinfo=UTC), datetime(2150, 7, 15, tzinfo=UTC))
_DATES = TemporalNormalizer()


def iso_date(text: str, dates: TemporalNormalizer = _DATES) -> str | None:
    """A name that is a whole calendar date or month with its year, in ISO 8601, else None. Read by the write
    track's date grammar (app/write/normalize/temporal.py: "May 5th, 2023", "5 May 2023", "2023/05/05",
    "2023年5月5日", "March 2024"; ``dates`` carries the day_first setting for "05/03/2023")."""
    text = text.strip()
    values: set[str] = set()
    for ref in _REFERENCES:
        spans = dates.find(text, ref)
        if len(spans) != 1 or spans[0].kind != "date" or (spans[0].start, spans[0].end) != (0, len(text)):
            return None
        values.add(spans[0].value)
    return values.pop() if len(values) == 1 else None


def clean_name(name: str, dates: TemporalNormalizer = _DATES) -> str:
    """An entity's name as the vault keeps it: NFKC, one space between words, no stray quotes around it or
    punctuation after it, a date in ISO 8601. Falls back to the name as given when nothing would be left."""
    text = _SPACES.sub(" ", unicodedata.normalize("NFKC", name)).strip()
    while len(text) > 1 and text[0] in _QUOTES and text[-1] in _QUOTES:
        text = text[1:-1].strip()
    text = _TRAILING.sub("", text).strip(_QUOTES + " ")
    return (iso_date(text, dates) or text) if text else name


@dataclass(frozen=True, slots=True)
class Entity:
    id: int
    name: str
    key: str
    mentions: int


@dataclass(frozen=True, slots=True)
class EntityPlan:
    merges: list[dict[str, int]]
    renames: list[dict[str, Any]]


def plan_entities(entities: list[Entity], dates: TemporalNormalizer = _DATES) -> EntityPlan:
    """Group the entities by the key of their cleaned name; in each group the most mentioned (then the oldest)
    is kept and the others merged into it; the kept one takes the cleaned name and key if they differ."""
    groups: dict[str, list[tuple[Entity, str]]] = {}
    for e in {e.id: e for e in entities}.values():
        name = clean_name(e.name, dates)
        groups.setdefault(canonical_key(name) or e.key, []).append((e, name))
    merges, renames = [], []
    for key, members in groups.items():
        keep, name = min(members, key=lambda m: (-m[0].mentions, m[0].id))
        merges += [{"drop": e.id, "keep": keep.id} for e, _ in members if e.id != keep.id]
        if (name, key) != (keep.name, keep.key):
            renames.append({"id": keep.id, "name": name, "key": key})
    return EntityPlan(sorted(merges, key=lambda m: m["drop"]), sorted(renames, key=lambda r: r["id"]))


class FactNormalizer:
    def __init__(self, limit: int = 5000, *, day_first: bool = False) -> None:
        self.limit = limit
        self.dates = TemporalNormalizer(day_first=day_first)

    async def __call__(self, conn: psycopg.AsyncConnection, since: datetime | None) -> dict[str, Any]:
        cur = await conn.execute(Q.normalize_predicates, (self.limit,))
        predicates = (await cur.fetchone())["r"]
        cur = await conn.execute(Q.entities_to_normalize, (since, self.limit))
        recent = [Entity(r["entity_id"], r["name"], r["canonical_key"], r["mention_count"])
                  for r in await cur.fetchall()]
        keys = sorted({canonical_key(clean_name(e.name, self.dates)) for e in recent} - {""})
        cur = await conn.execute(Q.entities_by_keys, (keys,))
        known = [Entity(r["entity_id"], r["name"], r["canonical_key"], r["mention_count"])
                 for r in await cur.fetchall()]
        plan = plan_entities(recent + known, self.dates)
        entities = {"merged": 0, "renamed": 0}
        if plan.merges or plan.renames:
            cur = await conn.execute(Q.normalize_entities, (json.dumps(plan.merges), json.dumps(plan.renames)))
            entities = (await cur.fetchone())["r"]
        return {"predicates": predicates, "entities": {**entities, "looked_at": len(recent)}}
