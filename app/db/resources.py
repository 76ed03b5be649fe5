"""Where the schema files are, as package data: ``app/sql`` and ``app/migrations`` (links to the repository's
``sql/`` and ``migrations/`` in a checkout, real directories in an installed wheel), found through
``importlib.resources`` so that migrating works from an installed package, not only from an editable checkout."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

_PACKAGE = resources.files("app")
SQL_DIR = Path(str(_PACKAGE / "sql"))
MIGRATIONS_DIR = Path(str(_PACKAGE / "migrations"))
