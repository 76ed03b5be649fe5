"""``memvault key create | list | revoke``: API keys, administered from the machine that runs the database."""

from __future__ import annotations

import argparse
import sys

from app.auth import SCOPES


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("key", help="API keys: create (shown once), list, revoke")
    k = p.add_subparsers(dest="key_command", required=True, metavar="ACTION")
    c = k.add_parser("create", help="create a key and print it (this once)")
    c.add_argument("--scope", required=True, choices=SCOPES, help="admin implies write, write implies read")
    c.add_argument("--vault", metavar="NAME", help="bind the key to this vault (default: every vault)")
    c.add_argument("--name", default="", metavar="LABEL", help="who or what uses the key")
    c.set_defaults(func=_create)
    ls = k.add_parser("list", help="list keys (never the keys themselves)")
    ls.add_argument("--vault", metavar="NAME", help="only the keys bound to this vault")
    ls.set_defaults(func=_list)
    r = k.add_parser("revoke", help="revoke a key: refused from the next request on")
    r.add_argument("id", help="the key's id (the part after mvk_)")
    r.set_defaults(func=_revoke)


def _run(work):
    import asyncio

    from app.db.connector import Database
    from app.services import database_url
    from app.settings import get_settings

    async def main():
        async with Database(database_url(get_settings())) as db:
            return await work(db)

    return asyncio.run(main())


def _create(args: argparse.Namespace) -> int:
    from app.keys import create_key

    key, info = _run(lambda db: create_key(db, scope=args.scope, vault=args.vault, name=args.name))
    print(key)
    where = f"vault {info.vault_name}" if info.vault_name else "every vault"
    print(f"memvault: key {info.id} ({info.scope}, {where}) created; it is shown this once: store it now.\n"
          f"  use it: export MEMVAULT_API_KEY=...; curl -H \"Authorization: Bearer $MEMVAULT_API_KEY\" ...",
          file=sys.stderr)
    return 0


def _list(args: argparse.Namespace) -> int:
    from app.keys import list_keys

    rows = _run(lambda db: list_keys(db, vault=args.vault))
    print(f"{'id':14s} {'scope':6s} {'vault':20s} {'created':20s} {'last used':20s} {'revoked':20s} name")
    for k in rows:
        print(f"{k.id:14s} {k.scope:6s} {k.vault_name or '*':20s} {_t(k.created_at):20s} {_t(k.last_used_at):20s} "
              f"{_t(k.revoked_at):20s} {k.name}")
    return 0


def _t(value) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if value is not None else "-"


def _revoke(args: argparse.Namespace) -> int:
    from app.keys import revoke_key

    key_id = args.id.removeprefix("mvk_").split("_")[0]
    info = _run(lambda db: revoke_key(db, key_id))
    print(f"key {info.id} revoked at {_t(info.revoked_at)}")
    return 0
