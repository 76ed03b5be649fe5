"""``memvault recall VAULT QUERY``: the same ``recall`` the API serves, printed in the chosen format."""

from __future__ import annotations

import argparse


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("recall", help="recall memories of a vault for a query")
    p.add_argument("vault", help="vault name")
    p.add_argument("query", help="what to recall")
    p.add_argument("--format", choices=("text", "json", "cards"), default="text")
    p.add_argument("--token-budget", type=int, help="cl100k tokens (default 2000)")
    p.add_argument("-k", type=int, help="at most this many cards (default 10)")
    p.add_argument("--as-of", help="valid time, ISO 8601 (default now)")
    p.add_argument("--known-at", help="transaction time, ISO 8601: what the vault believed then")
    p.add_argument("--thinking", choices=("fast", "slow"), help="override the intent's thinking mode")
    p.add_argument("--funnel", action=argparse.BooleanOptionalAction, default=None,
                   help="switch seed 003's selection funnel on or off")
    p.add_argument("--meta", action="store_true", help="also print meta (intent, mode, stage timings, tokens)")
    p.set_defaults(func=_recall)


def _recall(args: argparse.Namespace) -> int:
    import asyncio
    import json
    from datetime import datetime

    from app.read.config import RecallOptions
    from app.read.recall import recall
    from app.services import Services
    from app.vaults import get_vault

    def when(s: str | None):
        return datetime.fromisoformat(s) if s else None

    async def main() -> int:
        services = await Services.start()
        try:
            vault = await get_vault(services.db, args.vault)
            result = await recall(services, vault, args.query, RecallOptions(
                format=args.format, token_budget=args.token_budget, k=args.k, as_of=when(args.as_of),
                known_at=when(args.known_at), thinking=args.thinking, funnel=args.funnel))
        finally:
            await services.close()
        out = result.render()
        if args.format == "text":
            print(out["text"] or "(nothing recalled)")
        else:
            print(json.dumps({k: out[k] for k in ("cards", "cascade_cards")}, ensure_ascii=False, indent=1))
        if args.meta:
            print(json.dumps(result.meta, ensure_ascii=False, indent=1, default=str))
        return 0

    return asyncio.run(main())
