"""``memvault dream --vault V [--now] [--dry-run]``: dream one vault now, as the worker does at 04:00."""

from __future__ import annotations

import argparse
import json


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("dream", help="run the dream loop over a vault now (the worker does it at the vault's 04:00 "
                                     "when more than 24 h and at least 5 sessions passed since the last one)")
    p.add_argument("--vault", required=True, metavar="NAME", help="vault name")
    p.add_argument("--now", action="store_true", help="dream even if the dual gate is closed")
    p.add_argument("--dry-run", action="store_true", help="report what would change, change nothing")
    p.add_argument("--json", action="store_true", help="print the whole run record as JSON")
    p.set_defaults(func=_dream)


def _dream(args: argparse.Namespace) -> int:
    import asyncio

    from app.background.dream import DreamLoop
    from app.services import Services
    from app.vaults import get_vault

    async def run() -> int:
        services = await Services.start()
        try:
            vault = await get_vault(services.db, args.vault)
            outcome = await DreamLoop(services).run(vault, trigger="manual", dry_run=args.dry_run, force=args.now)
        finally:
            await services.close()
        run = outcome.run
        if args.json:
            print(json.dumps(run, indent=1, default=str))
            return 0
        report = run.get("report") or {}
        c = report.get("conflicts", {})
        print(f"dream {run['id']} of {args.vault}{' (dry run: nothing changed)' if args.dry_run else ''}"
              f"{' (resumed)' if outcome.resumed else ''}: {run['status']} in {run.get('wall_ms')} ms")
        for stage, ms in (report.get("stage_ms") or {}).items():
            print(f"  {stage:<17} {ms:>9} ms")
        print(f"  conflicts found {c.get('found')}, resolved {c.get('resolved')}, queued {c.get('queued')}, "
              f"stale {c.get('stale')}")
        print(f"  discoveries added {report.get('discoveries_added')}, orphan entities removed "
              f"{report.get('orphans_removed')}, review items pending {report.get('review_pending')}")
        return 0

    return asyncio.run(run())
