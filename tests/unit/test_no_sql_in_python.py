"""SQL lives in sql/ (STYLE.md): outside app/db/ and app/bench/, no Python string literal holds SQL text. A
statement is a named query of sql/queries.sql (``Q.name``) or a versioned function it calls."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXEMPT = ("app/db/", "app/bench/")
SQL = re.compile(r"^\s*(SELECT|INSERT|UPDATE|DELETE|WITH|CREATE|DROP|ALTER|SET|LOAD|TRUNCATE|COPY|GRANT|VACUUM|"
                 r"ANALYZE)\s|\bFROM\s+(memvault|public|ag_catalog)\.|\bmemvault\.\w+_v\d+\s*\(", re.S)

# Modules not converted yet (each still sends SQL text of its own). Empty since the dream loop's modules moved
# their statements to sql/queries.sql; it may only shrink, so a new module starts converted.
REMAINING: frozenset[str] = frozenset()


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                ids.add(id(first.value))
    return ids


def offenders() -> list[str]:
    found = []
    for path in sorted((ROOT / "app").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(EXEMPT):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=rel)
        skip = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip \
                    and SQL.search(node.value):
                found.append(f"{rel}:{node.lineno}: {node.value.strip().splitlines()[0][:70]}")
    return found


def test_no_sql_text_in_python_outside_the_database_layer() -> None:
    bad = [o for o in offenders() if o.split(":", 1)[0] not in REMAINING]
    assert not bad, "SQL text in Python; make it a named query of sql/queries.sql:\n" + "\n".join(bad)


def test_the_remaining_list_only_names_modules_that_still_need_it() -> None:
    still = {o.split(":", 1)[0] for o in offenders()}
    present = {m for m in REMAINING if (ROOT / m).exists()}
    assert present <= still, f"converted, drop from REMAINING: {sorted(present - still)}"


def test_the_check_finds_sql() -> None:
    assert SQL.search("SELECT * FROM memvault.recall_fast_v2(%s)")
    assert SQL.search("select 1 FROM memvault.block")
    assert SQL.search("memvault.touch_blocks_v1(%s)")
    assert not SQL.search("Select the best candidates")


def test_every_named_query_exists_and_is_used() -> None:
    from app.db.queries import queries

    used: dict[str, str] = {}
    for path in sorted((ROOT / "app").rglob("*.py")):
        if path.name == "queries.py" and path.parent.name == "db":
            continue  # the loader's own docstring
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for name in re.findall(r"\bQ\.([a-z0-9_]+)", line):
                used.setdefault(name, f"{path.relative_to(ROOT)}:{n}")
    defined = set(queries())
    missing = {name: where for name, where in used.items() if name not in defined}
    assert not missing, f"not in sql/queries.sql: {missing}"
    assert not defined - set(used), f"named queries nobody uses: {sorted(defined - set(used))}"
