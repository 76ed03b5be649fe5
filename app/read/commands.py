"""``memvault recall VAULT QUERY``: the same ``recall`` the API serves: readable cards for people (rich), or the
API's own formats for scripts (``--format text | json | cards``)."""

from __future__ import annotations

import argparse


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("recall", help="recall memories of a vault for a query")
    p.add_argument("vault", help="vault name")
    p.add_argument("query", help="what to recall")
    p.add_argument("--format", choices=("view", "text", "json", "cards"), default="view",
                   help="view (default): readable cards; text, json, cards: the API's formats, for scripts")
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

    from app.errors import InvalidInput
    from app.read.config import RecallOptions
    from app.read.recall import recall
    from app.write.commands import vault_services

    def when(s: str | None, name: str):
        try:
            return datetime.fromisoformat(s) if s else None
        except ValueError as exc:
            raise InvalidInput(f"{name} must be an ISO 8601 time such as 2026-03-01T12:00:00+00:00, got {s!r}"
                               ) from exc

    async def main() -> int:
        async with vault_services(args.vault) as (services, vault):  # closed after recall's write-back
            result = await recall(services, vault, args.query, RecallOptions(
                format="cards" if args.format == "view" else args.format, token_budget=args.token_budget,
                k=args.k, as_of=when(args.as_of, "--as-of"), known_at=when(args.known_at, "--known-at"),
                thinking=args.thinking, funnel=args.funnel))
        out = result.render()
        if args.format == "view":
            show_cards(out["cards"], out["cascade_cards"], args.query)
        elif args.format == "text":
            print(out["text"] or "(nothing recalled)")
        else:
            print(json.dumps({k: out[k] for k in ("cards", "cascade_cards")}, ensure_ascii=False, indent=1))
        if args.meta:
            print(json.dumps(result.meta, ensure_ascii=False, indent=1, default=str))
        return 0

    return asyncio.run(main())


def show_cards(cards: list[dict], cascade_cards: list[dict], query: str) -> None:
    """Each card as a panel: rank, memory id, category, score; its text; when it was true and where it was said."""
    from rich.console import Console
    from rich.markup import escape
    from rich.panel import Panel

    console = Console()
    if not cards and not cascade_cards:
        console.print(f"nothing recalled for {escape(query)!r}")
        return
    for rank, c in enumerate(cards, 1):
        title = f"#{rank}  memory {c['id']}  {c.get('category') or c.get('kind')}  score {c['score']:.3f}"
        when = (c.get("valid_at") or "")[:16].replace("T", " ")
        said = f"{c.get('source_kind')}" + (f" in session {c['session_id']}" if c.get("session_id") else "")
        console.print(Panel(escape(c["text"]), title=escape(title), title_align="left",
                            subtitle=escape(f"{when}  {said}  trust {c.get('trust_score', 0):.2f}"),
                            subtitle_align="right"))
    if cascade_cards:
        console.print("[bold]Related (graph):[/bold]")
        for c in cascade_cards:
            console.print(f"  - {escape(c['text'])} [dim](memory {c['id']})[/dim]")
