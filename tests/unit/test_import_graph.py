"""The import graph of app/ (issue 33, item 4): no new import cycle, and no new import of the benchmarks from
production code. Imports inside functions count (they only hide a cycle: Python resolves them later); imports
under ``if TYPE_CHECKING:`` do not (they never run). The cycles and benchmark imports there are today are listed:
each may shrink or go (then shrink its entry), none may grow, and a new one fails."""

from __future__ import annotations

import ast
from pathlib import Path

APP = Path(__file__).resolve().parents[2] / "app"

# Strongly connected components of the import graph today (module sets of two or more).
KNOWN_CYCLES = [
    # The write tracks import Services and Services builds them (the read track's modules, listed here before,
    # had already left it: the entry is shrunk to what remains, so none of them can come back unseen).
    {"app.services", "app.write.pipeline", "app.write.sessions"},
    # Each LLM task module registers itself with the task registry, which loads them all.
    {"app.models.tasks", "app.models.tasks.base", "app.models.tasks.classify_intent",
     "app.models.tasks.crag_evaluate", "app.models.tasks.extract_atomic_units", "app.models.tasks.extract_triples",
     "app.models.tasks.fit_gate", "app.models.tasks.lint_judge", "app.models.tasks.predict_next_questions",
     "app.models.tasks.reflect", "app.models.tasks.resolve_conflict", "app.models.tasks.summarize"},
    {"app.bench.full", "app.bench.harness"},
]
# Production modules that import app.bench (the CLI mounts the bench commands: that one stays). The loaders the
# benchmarks share with production live in production modules (app/importers/datasets.py, app/safety/corpora.py).
KNOWN_BENCH_IMPORTS = {"app.cli"}


def _modules() -> dict[str, Path]:
    out = {}
    for path in APP.rglob("*.py"):
        name = ".".join(path.relative_to(APP.parent).with_suffix("").parts)
        out[name.removesuffix(".__init__")] = path
    return out


def _type_checking_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def import_graph() -> dict[str, set[str]]:
    mods = _modules()

    def resolve(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    edges: dict[str, set[str]] = {m: set() for m in mods}
    for m, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _type_checking_lines(tree)
        package = m if path.name == "__init__.py" else m.rpartition(".")[0]
        for node in ast.walk(tree):
            if getattr(node, "lineno", None) in skip:
                continue
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package
                    for _ in range(node.level - 1):
                        up = up.rpartition(".")[0]
                    base = f"{up}.{base}" if base else up
                targets = [f"{base}.{a.name}" for a in node.names] or [base]
            for t in targets:
                if t.startswith("app") and (r := resolve(t)) and r != m:
                    edges[m].add(r)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's strongly connected components with more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[set[str]] = []
    counter = 0

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def test_no_new_import_cycle() -> None:
    new = [sorted(c) for c in cycles(import_graph()) if not any(c <= known for known in KNOWN_CYCLES)]
    assert not new, f"new import cycles (break them; a job is deferred through app.worker.catalogue): {new}"


def test_the_write_track_reaches_no_job_module() -> None:
    """The cycle services -> write.pipeline -> background.graph_build -> worker.context -> services is gone: the
    tracks defer their jobs through the catalogue, which depends on the database layer only."""
    edges = import_graph()
    assert edges["app.worker.catalogue"] <= {"app.db.queries"}
    for track in ("app.write.pipeline", "app.write.sessions"):
        assert not {m for m in edges[track] if m.startswith(("app.background", "app.worker.context"))}, track


def test_no_new_import_of_the_benchmarks_from_production_code() -> None:
    edges = import_graph()
    importers = {m for m, to in edges.items() if not m.startswith("app.bench")
                 and any(t == "app.bench" or t.startswith("app.bench.") for t in to)}
    assert importers <= KNOWN_BENCH_IMPORTS, sorted(importers - KNOWN_BENCH_IMPORTS)
