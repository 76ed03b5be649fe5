"""Per-vault export and import in memvault's own JSONL format (one implementation: the REST routes and the CLI
call these functions).

The format, one JSON object per line, each with a ``type``:

    {"type": "header", "format": "memvault-export", "version": 1, "vault": ..., "embedder": ..., "dim": ...,
     "embeddings": true|false, "exported_at": ...}
    {"type": "session", ...}   {"type": "turn", ...}
    {"type": "block", ..., "history": [...], "sources": [...], "usage": {...}, ["embedding": "[...]"]}
    {"type": "entity", ...}    {"type": "alias", ...}    {"type": "triple", ...}
    {"type": "lexeme_stats_state", ...}
    {"type": "end", "counts": {"session": n, ...}}

Rows are whole table rows (their ids kept); the tsvector, the AGE graph, lexeme counts and the second rail are
rebuilt on import, and vectors are re-embedded when absent (or when they came from another embedder). The
``end`` line lets an import refuse a truncated file.

The API other modules use: :func:`is_memvault_export` (format detection, e.g. for ``memvault import``),
:func:`export_vault` (an async iterator of lines), :func:`import_vault` (from any iterable of lines).
"""

from app.portability.exporter import export_vault
from app.portability.format import FORMAT, VERSION, is_memvault_export
from app.portability.importer import ImportReport, import_vault

__all__ = ["FORMAT", "VERSION", "ImportReport", "export_vault", "import_vault", "is_memvault_export"]
