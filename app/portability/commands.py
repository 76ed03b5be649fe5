"""``memvault export | purge``: a vault out to JSONL (app/portability; ``memvault import`` of app/importers reads it
back in through :func:`app.portability.import_vault`), and the hard delete."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export", help="export a vault as JSON lines (memvault's own format)")
    p.add_argument("--vault", required=True, metavar="NAME")
    p.add_argument("-o", "--output", type=Path, default=None, help="file to write (default: standard output)")
    p.add_argument("--embeddings", action="store_true", help="include the vectors (else re-embedded on import)")
    p.set_defaults(func=_export)

    p = sub.add_parser("purge", help="erase a vault, or one memory of it, for good (soft delete is the API's "
                                     "default; this is the hard delete)")
    p.add_argument("--vault", default=None, metavar="NAME", help="the vault to purge (may be left out with "
                   "--physical: only the physical step, after a purge done through the API)")
    p.add_argument("--memory", type=int, default=None, metavar="ID", help="only this memory (and the turns it was "
                   "said in, and what was derived from them)")
    p.add_argument("--physical", action="store_true", help="then make PostgreSQL's files forget the erased rows: "
                   "rewrite every table (VACUUM FULL: each table locked while it is rewritten), checkpoint and "
                   "switch the WAL past them (docs/operations.md, Erasure)")
    p.set_defaults(func=_purge)


def _export(args: argparse.Namespace) -> int:
    import asyncio

    from app.portability import export_vault
    from app.private_files import open_private
    from app.services import Services
    from app.vaults import get_vault

    async def run() -> int:
        services = await Services.start()
        out = open_private(args.output) if args.output else sys.stdout  # mode 0600: a vault's whole contents
        try:
            vault = await get_vault(services.db, args.vault)
            async for chunk in export_vault(services, vault, embeddings=args.embeddings):
                out.write(chunk)
        finally:
            if args.output:
                out.close()
            await services.close()
        if args.output:
            print(f"exported vault {args.vault} to {args.output}", file=sys.stderr)
        return 0

    return asyncio.run(run())


def _purge(args: argparse.Namespace) -> int:
    import asyncio

    from app.services import Services
    from app.vaults import get_vault, purge_vault
    from app.write.memories import purge_memory

    if args.vault is None and not args.physical:
        from app.errors import InvalidInput

        raise InvalidInput("purge needs --vault NAME (or --physical alone: the physical step only)")

    async def run() -> int:
        if args.vault is None:
            return 0
        services = await Services.start()
        try:
            if args.memory is None:
                done = await purge_vault(services.db, args.vault)
                print(f"purged vault {args.vault}: {done.get('blocks', 0)} memories, its graph, turns, logs and "
                      f"{done.get('jobs', 0)} queued jobs; {done.get('audit_redacted', 0)} audit rows redacted")
            else:
                vault = await get_vault(services.db, args.vault, deleted=True)
                done = await purge_memory(services, vault, args.memory)
                print(f"purged memory {args.memory} of {args.vault}: memories {done['blocks']}, "
                      f"{done['turns']} turns, {done['triples']} triples, {done['entities']} entities")
        finally:
            await services.close()
        return 0

    status = asyncio.run(run())
    if args.physical:
        from app.db.scrub import scrub
        from app.services import database_url
        from app.settings import get_settings

        print(f"physical erasure: {scrub(database_url(get_settings())).summary()}")
    return status
