"""The service's SQL statements by name: ``sql/queries.sql``, loaded once (procrastinate's ``queries.sql`` is the
model). Each statement is introduced by a ``-- name --`` line and optional ``-- description`` lines; most call a
versioned function of ``sql/idempotent/``. Python code outside ``app/db/`` (and the benchmarks) holds no SQL text:
it names a statement, ``Q.recall_fast``, and passes parameters.
"""

from __future__ import annotations

import re
from functools import cache

from app.db.resources import SQL_DIR

QUERIES_REGEX = re.compile(r"(?:\n|^)-- ([a-z0-9_]+) --\n(?:-- .+\n)*", re.MULTILINE)


class Query(str):
    """A statement of ``sql/queries.sql`` (its ``name`` says which)."""

    __slots__ = ("name",)

    def __new__(cls, name: str, text: str) -> Query:
        self = super().__new__(cls, text)
        self.name = name
        return self


def parse_query_file(text: str) -> dict[str, Query]:
    split = iter(QUERIES_REGEX.split(text))
    next(split)  # the file's header
    out: dict[str, Query] = {}
    for name in split:
        if name in out:
            raise ValueError(f"sql/queries.sql: {name!r} is defined twice")
        out[name] = Query(name, next(split).strip().rstrip(";"))
    return out


@cache
def queries() -> dict[str, Query]:
    return parse_query_file((SQL_DIR / "queries.sql").read_text(encoding="utf-8"))


class _Queries:
    """``Q.name``: the named statement; an unknown name is an AttributeError that says where they live."""

    def __getattr__(self, name: str) -> Query:
        try:
            return queries()[name]
        except KeyError:
            raise AttributeError(f"no query {name!r} in sql/queries.sql") from None


Q = _Queries()
