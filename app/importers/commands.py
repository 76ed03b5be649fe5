"""``memvault import --vault V FILE``: a chat export (ChatGPT, Claude), a benchmark file (LoCoMo, LongMemEval),
JSON lines of turns, or a memvault export, into a vault, with a progress bar; resumable (``app.importers.run``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from app.importers.detect import FORMATS


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("import", help="import a chat export (ChatGPT, Claude), LoCoMo / LongMemEval, JSON lines of "
                                      "turns, or a memvault export into a vault (format detected; resumable)")
    p.add_argument("--vault", required=True, metavar="NAME", help="the vault; created if it does not exist")
    p.add_argument("file", type=Path, help="the export file (ChatGPT / Claude: conversations.json of the zip)")
    p.add_argument("--format", choices=FORMATS, default=None, help="skip detection")
    p.add_argument("--branches", action="store_true",
                   help="ChatGPT: also keep the branches the conversation left (edited prompts, regenerated "
                        "answers), each as a session of its own; default: the main line only")
    p.add_argument("--dry-run", action="store_true", help="read and count, write nothing")
    p.add_argument("--no-progress", action="store_true", help="no progress bar (it goes to stderr otherwise)")
    p.set_defaults(func=_import)


def _import(args: argparse.Namespace) -> int:
    import asyncio
    import sys

    from tqdm import tqdm

    from app.importers.run import import_conversations, read_conversations

    fmt, conversations = read_conversations(args.file, args.format, branches=args.branches)
    if fmt == "memvault":
        return _import_own_export(args)
    turns = sum(len(c.turns) for c in conversations)
    print(f"{args.file}: {fmt}, {len(conversations)} conversations, {turns} turns", file=sys.stderr)
    if args.dry_run:
        return 0

    async def run() -> int:
        from app.services import Services
        from app.vaults import get_or_create_vault

        services = await Services.start()
        bar = tqdm(unit="turn", desc=f"import {fmt}", disable=args.no_progress, file=sys.stderr)
        try:
            vault = await get_or_create_vault(services.db, args.vault)
            report = await import_conversations(services, vault, fmt, conversations, progress=bar.update,
                                                total=lambda n: bar.reset(total=n))
        finally:
            bar.close()
            await services.close()
        decisions = ", ".join(f"{n} {d}" for d, n in sorted(report.decisions.items())) or "none"
        print(f"imported into vault {report.vault}: {report.turns_written} turns in {report.sessions_new} new and "
              f"{report.sessions_resumed} resumed sessions; {report.sessions_complete} sessions already complete "
              f"({report.turns_skipped} turns skipped); memories: {decisions}")
        return 0

    return asyncio.run(run())


def _import_own_export(args: argparse.Namespace) -> int:
    """memvault's own export goes to its own importer (app.portability: a new vault, every table restored)."""
    import asyncio

    from app.errors import ConfigError

    try:
        from app.portability import import_vault
    except ModuleNotFoundError as exc:
        raise ConfigError("this build cannot import memvault exports (app.portability is missing)") from exc
    from app.services import Services

    async def run() -> int:
        services = await Services.start()
        try:
            with args.file.open("rb") as fh:
                report = await import_vault(services, args.vault, fh)
        finally:
            await services.close()
        counts = ", ".join(f"{v} {k}" for k, v in report.counts.items())
        print(f"imported vault {report.source_vault!r} as {report.vault!r}: {counts}; "
              f"{report.reembedded} vectors computed")
        for note in report.notes:
            print(f"  {note}")
        return 0

    return asyncio.run(run())
