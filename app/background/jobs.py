"""Every job of the background track, registered on the Procrastinate app (``app.worker.app``) by importing each
module of this package: a job is one module here (its task name, queue, lock, the typed ``defer_<job>(conn, *,
vault_id, ...)`` that producers import, and the task). The worker imports this module (``import_paths``); a
module that fails to import stops the worker at start-up, nothing is skipped."""

from __future__ import annotations

import importlib
import pkgutil

import app.background as _package


def modules() -> list[str]:
    """The names of the package's modules, this one excepted."""
    return sorted(f"{_package.__name__}.{m.name}" for m in pkgutil.iter_modules(_package.__path__)
                  if m.name != "jobs")


for _name in modules():
    importlib.import_module(_name)
