"""``memvault forget | feedback | session close``: curating a vault from a script, as the REST API's
``DELETE .../memories/{id}``, ``POST .../memories/{id}/feedback`` and ``POST .../sessions/{id}/close`` do.
``--json`` prints one JSON object; errors and exit codes are the CLI's (``app.cli``): 3 for an unknown vault,
memory or session, 4 for a session already closed."""

from __future__ import annotations

import argparse
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.services import Services
    from app.vaults import Vault


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("forget", help="forget a memory: no longer recalled (its record and history stay)")
    p.add_argument("vault", help="vault name")
    p.add_argument("memory_id", type=int, help="the memory's id (recall and remember print it)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_forget)

    p = sub.add_parser("feedback", help="'+' a recalled memory helped, '-' it did not (recall ranks by it)")
    p.add_argument("vault", help="vault name")
    p.add_argument("memory_id", type=int, help="the memory's id")
    p.add_argument("signal", choices=("+", "-"))
    p.add_argument("--note", default=None, help="why, for the audit log")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_feedback)

    p = sub.add_parser("session", help="a conversation session of a vault")
    s = p.add_subparsers(dest="session_command", required=True, metavar="ACTION")
    c = s.add_parser("close", help="close a session now: its atomic units (Facts, Decisions...), a summary and a "
                                   "thread map are written (the worker does it after a while of silence)")
    c.add_argument("vault", help="vault name")
    c.add_argument("session", help="session id")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=_session_close)


@asynccontextmanager
async def vault_services(name: str) -> AsyncIterator[tuple[Services, Vault]]:
    """The services and the vault ``name`` (never created: an unknown name is NotFound, exit 3, with the command
    that creates it), closed on the way out once recall's write-back is done."""
    from app.errors import NotFound
    from app.services import Services
    from app.vaults import get_vault

    services = await Services.start()
    try:
        try:
            vault = await get_vault(services.db, name)
        except NotFound as exc:
            raise NotFound(exc.message, hint=f"create it: memvault vault create {name}") from exc
        yield services, vault
    finally:
        await services.close()


def _run(coro) -> int:
    import asyncio

    return asyncio.run(coro)


def _print(args: argparse.Namespace, out: dict, line: str) -> int:
    print(json.dumps(out, ensure_ascii=False, default=str) if args.json else line)
    return 0


def _forget(args: argparse.Namespace) -> int:
    from app.write.memories import retract_memory

    async def run() -> int:
        async with vault_services(args.vault) as (services, vault):
            await retract_memory(services, vault, args.memory_id)
        return _print(args, {"memory_id": args.memory_id, "forgotten": True},
                      f"memory {args.memory_id} forgotten (no longer recalled; its history stays)")

    return _run(run())


def _feedback(args: argparse.Namespace) -> int:
    from app.write.memories import feedback_memory

    async def run() -> int:
        async with vault_services(args.vault) as (services, vault):
            row = await feedback_memory(services, vault, args.memory_id, 1 if args.signal == "+" else -1,
                                        note=args.note)
        out = {"memory_id": args.memory_id, "feedback_up": row["feedback_up"], "feedback_down": row["feedback_down"]}
        return _print(args, out, f"memory {args.memory_id}: feedback {row['feedback_up']} up, "
                                 f"{row['feedback_down']} down")

    return _run(run())


def _session_close(args: argparse.Namespace) -> int:
    async def run() -> int:
        async with vault_services(args.vault) as (services, vault):
            r = await services.sessions.close(vault, args.session)
        units = [x.as_dict() for x in r.units]
        out = {"session_id": r.session_id, "segment": r.segment, "summary_block_id": r.summary_block_id,
               "units": units}
        kept = sum(1 for u in units if u.get("block_id") is not None)
        return _print(args, out, f"session {r.session_id!r} closed: {len(units)} units ({kept} kept), summary "
                                 + (f"memory {r.summary_block_id}" if r.summary_block_id else "none"))

    return _run(run())
