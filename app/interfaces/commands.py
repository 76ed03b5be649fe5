"""``memvault mcp`` and ``memvault hook EVENT``: the agent-facing interfaces (``app.interfaces.mcp``,
``app.interfaces.hooks``)."""

from __future__ import annotations

import argparse

from app.interfaces.hooks import EVENTS


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("mcp", help="serve the Model Context Protocol on stdio (tools: recall, remember, append_turns)")
    p.add_argument("--vault", metavar="NAME", help="the tools' default vault; created if it does not exist")
    p.set_defaults(func=_mcp)

    p = sub.add_parser("hook", help="a Claude Code hook: reads the event's JSON on stdin (see the README)")
    p.add_argument("event", choices=EVENTS)
    p.add_argument("--vault", metavar="NAME", required=True, help="the vault; created if it does not exist")
    p.add_argument("--token-budget", type=int, default=1000,
                   help="cl100k tokens of memories handed to the model per prompt (default 1000)")
    p.set_defaults(func=_hook)


def _mcp(args: argparse.Namespace) -> int:
    import asyncio
    import contextlib
    import logging
    import sys

    from app.interfaces.mcp import McpServer, serve_stdio
    from app.runner import LOG_FORMAT
    from app.services import Services
    from app.vaults import get_or_create_vault

    protocol_in, protocol_out = sys.stdin.buffer, sys.stdout
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format=LOG_FORMAT)

    def write_line(text: str) -> None:
        protocol_out.write(text + "\n")
        protocol_out.flush()

    async def main() -> int:
        services = await Services.start()
        try:
            if args.vault:
                await get_or_create_vault(services.db, args.vault)
            logging.getLogger("app.interfaces.mcp").info("memvault mcp: ready (default vault %s)", args.vault)
            await serve_stdio(McpServer(services, args.vault),
                              lambda: asyncio.to_thread(protocol_in.readline), write_line)
        finally:
            await services.close()
        return 0

    # stdout carries the protocol only: anything else printed on the way (provisioning, a library) goes to stderr.
    with contextlib.redirect_stdout(sys.stderr):
        return asyncio.run(main())


def _hook(args: argparse.Namespace) -> int:
    import asyncio
    import contextlib
    import sys

    from app.errors import InvalidInput
    from app.interfaces.hooks import HookInput, run_hook
    from app.services import Services
    from app.vaults import get_or_create_vault

    if args.token_budget < 1:
        raise InvalidInput(f"--token-budget must be at least 1, got {args.token_budget}")
    data = HookInput.parse(sys.stdin.read())
    out = sys.stdout

    async def main() -> str | None:
        services = await Services.start()
        try:
            vault = await get_or_create_vault(services.db, args.vault)
            return await run_hook(services, vault, args.event, data, token_budget=args.token_budget)
        finally:
            await services.close()

    with contextlib.redirect_stdout(sys.stderr):  # only the hook's answer goes to stdout
        answer = asyncio.run(main())
    if answer:
        print(answer, file=out)
    return 0
