"""``memvault remember`` and ``memvault vault``: the write track and a vault's overview for people and scripts
(``memvault recall`` is in ``app.read.commands``). ``--json`` prints one JSON object for a script."""

from __future__ import annotations

import argparse
import json
import sys
from typing import get_args

from app.db.queries import Q
from app.write.schemas import Category, SourceKind


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("remember", help="store a memory in a vault through the write track ('-': read stdin)")
    p.add_argument("vault", help="vault name (`memvault vault create NAME` makes one)")
    p.add_argument("text", help="the memory's text; '-' reads it from standard input")
    p.add_argument("--category", choices=get_args(Category), default=None)
    p.add_argument("--source-kind", choices=get_args(SourceKind), default="user")
    p.add_argument("--said-at", default=None, help="when it was said, ISO 8601 (default now)")
    p.add_argument("--session", default=None, help="session id")
    p.add_argument("--json", action="store_true", help="print the decision as JSON")
    p.set_defaults(func=_remember)

    p = sub.add_parser("vault", help="list, create or show vaults")
    v = p.add_subparsers(dest="vault_command", required=True, metavar="ACTION")
    ls = v.add_parser("list", help="the vaults, with their size")
    ls.add_argument("--json", action="store_true")
    ls.set_defaults(func=_vault_list)
    c = v.add_parser("create", help="create a vault (and its knowledge graph)")
    c.add_argument("name")
    c.set_defaults(func=_vault_create)
    s = v.add_parser("show", help="a vault's memories, sessions, turns and graph size")
    s.add_argument("name")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=_vault_show)


def _remember(args: argparse.Namespace) -> int:
    import asyncio
    from datetime import UTC, datetime

    from pydantic import ValidationError

    from app.errors import InvalidInput, field_problems
    from app.write.schemas import MemoryIn

    text = sys.stdin.read() if args.text == "-" else args.text
    try:
        memory = MemoryIn(content=text.strip(), category=args.category, source_kind=args.source_kind,
                          said_at=args.said_at, session_id=args.session)
    except ValidationError as exc:
        raise InvalidInput(field_problems(exc), hint="see memvault remember --help") from exc

    async def run() -> int:
        from app.write.commands import vault_services
        from app.write.items import WriteItem

        async with vault_services(args.vault) as (services, vault):  # never created here: a typo is exit 3
            [r] = await services.write.remember(vault, [WriteItem(
                content=memory.content, said_at=memory.said_at or datetime.now(UTC), source_kind=memory.source_kind,
                category=memory.category, confidence=memory.confidence, session_id=memory.session_id)])
        out = r.as_dict()
        if args.json:
            print(json.dumps(out, ensure_ascii=False, default=str))
        else:
            block = f" as memory {out['block_id']}" if out.get("block_id") is not None else ""
            why = "; ".join(out.get("reasons") or ())
            print(f"{out['decision']}{block}" + (f": {why}" if why else ""))
        return 0

    return asyncio.run(run())


async def _overview(db, vault) -> dict:
    return await db.fetchone(Q.vault_overview, vault_id=vault.id) or {}


def _vault_list(args: argparse.Namespace) -> int:
    import asyncio

    from rich.console import Console
    from rich.table import Table

    from app.db.connector import Database
    from app.services import database_url
    from app.settings import get_settings
    from app.vaults import list_vaults

    async def run() -> list[dict]:
        async with Database(database_url(get_settings())) as db:
            return [{"name": v.name, "created_at": v.created_at.isoformat(), **(await _overview(db, v))}
                    for v in await list_vaults(db)]

    rows = asyncio.run(run())
    if args.json:
        print(json.dumps(rows, default=str))
        return 0
    table = Table("vault", "memories", "sessions", "turns", "entities", "last write")
    for r in rows:
        table.add_row(r["name"], str(r.get("memories", 0)), str(r.get("sessions", 0)), str(r.get("turns", 0)),
                      str(r.get("entities", 0)), str(r.get("last_write_at") or "-")[:19])
    Console().print(table if rows else "no vaults yet: memvault vault create NAME")
    return 0


def _vault_create(args: argparse.Namespace) -> int:
    import asyncio

    from app.db.connector import Database
    from app.services import database_url
    from app.settings import get_settings
    from app.vaults import create_vault

    async def run() -> None:
        async with Database(database_url(get_settings())) as db:
            await create_vault(db, args.name)

    asyncio.run(run())
    print(f"vault {args.name} created")
    return 0


def _vault_show(args: argparse.Namespace) -> int:
    import asyncio

    from app.db.connector import Database
    from app.services import database_url
    from app.settings import get_settings
    from app.vaults import get_vault

    async def run() -> dict:
        async with Database(database_url(get_settings())) as db:
            v = await get_vault(db, args.name)
            return {"name": v.name, "id": str(v.id), "graph": v.graph_name, "created_at": v.created_at.isoformat(),
                    **(await _overview(db, v))}

    info = asyncio.run(run())
    if args.json:
        print(json.dumps(info, default=str))
    else:
        for key, value in info.items():
            print(f"{key:>14}  {value}")
    return 0
