"""The background track's one home: every job is a module of app/background/, registered by importing the
package, and producers queue jobs only through the typed ``defer_<job>`` functions of the jobs catalogue
(app.worker.catalogue)."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import app.background.jobs as jobs
from app.worker.app import app as procrastinate_app

APP = Path(__file__).resolve().parents[2] / "app"


def test_every_task_is_defined_in_app_background() -> None:
    ours = {name: task for name, task in procrastinate_app.tasks.items() if not name.startswith(
        ("builtin:", "procrastinate."))}
    assert {"build_graph", "close_idle_sessions", "prefetch_for_turn", "refresh_lexeme_stats", "embed_rail2",
            "build_ann_indexes", "graph_centrality"} <= set(ours)
    assert {t.func.__module__ for t in ours.values()} <= set(jobs.modules())


def test_defer_functions_take_the_connection_and_keyword_only_vault_id() -> None:
    """Producers queue jobs through the catalogue's ``defer_<job>`` (app.worker.catalogue), each of a task of
    app/background/ registered under the catalogue's name."""
    import app.worker.catalogue as catalogue

    found = 0
    for attr, fn in vars(catalogue).items():
        if attr.startswith("defer_") and attr != "defer_in" and inspect.iscoroutinefunction(fn):
            params = inspect.signature(fn).parameters
            assert list(params)[0] == "conn", attr
            assert params["vault_id"].kind is inspect.Parameter.KEYWORD_ONLY, attr
            found += 1
    assert found >= 3  # graph build, prefetch, dream
    names = {catalogue.GRAPH_BUILD, catalogue.PREFETCH, catalogue.DREAM}
    assert {procrastinate_app.tasks[n].func.__module__ for n in names} <= set(jobs.modules())


def test_no_job_is_queued_by_name_outside_app_background() -> None:
    offenders = []
    for path in sorted(APP.rglob("*.py")):
        rel = path.relative_to(APP.parent)
        if rel.parts[:2] in (("app", "background"), ("app", "worker")):
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"\bdefer_in\(|\.defer_async\(|\.defer\(", line):
                offenders.append(f"{rel}:{n}: {line.strip()}")
    assert not offenders, "queue jobs through app.worker.catalogue's defer_<job> functions:\n" + "\n".join(offenders)


def test_nothing_is_found_through_a_list_of_module_names() -> None:
    """Controllers, commands and tasks are plain imports: a missing module is an ImportError at start-up."""
    for rel in ("cli.py", "api/app.py", "worker/app.py", "bench/commands.py"):
        text = (APP / rel).read_text(encoding="utf-8")
        assert "import_module" not in text and "ModuleNotFoundError" not in text, rel


def test_every_controller_is_mounted() -> None:
    """A controller is one import and one entry in app.api.app.CONTROLLERS; one defined and not mounted is
    caught here rather than by a user's 404."""
    from app.api.app import CONTROLLERS

    defined = set()
    for path in sorted(APP.rglob("*.py")):
        defined |= set(re.findall(r"^class (\w+)\(Controller\):", path.read_text(encoding="utf-8"), re.M))
    assert defined == {c.__name__ for c in CONTROLLERS}
