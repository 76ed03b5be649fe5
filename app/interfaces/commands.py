"""``memvault mcp`` and ``memvault hook EVENT``: the agent-facing interfaces (``app.interfaces.mcp``,
``app.interfaces.hooks``)."""

from __future__ import annotations

import argparse

from app.interfaces.hooks import EVENTS


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("mcp", help="serve the Model Context Protocol on stdio, or streamable HTTP with --http "
                                   "(tools: recall, remember, append_turns, forget, feedback)")
    p.add_argument("--vault", metavar="NAME", help="the tools' default vault; created if it does not exist")
    p.add_argument("--http", action="store_true", help="streamable HTTP on 127.0.0.1 (endpoint /mcp) instead of stdio")
    p.add_argument("--port", type=int, default=8421, help="port for --http (default 8421; 0: any free port)")
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

    from app.interfaces import mcp
    from app.runner import LOG_FORMAT
    from app.services import Services
    from app.vaults import get_or_create_vault

    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format=LOG_FORMAT)
    log = logging.getLogger("app.interfaces.mcp")

    async def main() -> int:
        # stdout carries the protocol only: what is printed while starting (provisioning, a library) goes to
        # stderr; while serving, the SDK's stdio transport points fd 1 at stderr itself.
        with contextlib.redirect_stdout(sys.stderr):
            services = await Services.start()
        try:
            if args.vault:
                await get_or_create_vault(services.db, args.vault)
            if not args.http:
                log.info("memvault mcp: ready on stdio (default vault %s)", args.vault)
                await mcp.serve_stdio(services, args.vault)
                return 0
            import uvicorn

            config = uvicorn.Config(mcp.http_app(services, args.vault), host="127.0.0.1", port=args.port,
                                    log_level="warning")
            server = uvicorn.Server(config)
            task = asyncio.create_task(server.serve())
            while not server.started and not task.done():
                await asyncio.sleep(0.05)
            if server.started:
                port = server.servers[0].sockets[0].getsockname()[1]
                log.info("memvault mcp: ready on http://127.0.0.1:%d/mcp (default vault %s)", port, args.vault)
            await task
            return 0
        finally:
            await services.close()

    return asyncio.run(main())


def _hook(args: argparse.Namespace) -> int:
    import asyncio
    import contextlib
    import sys

    from app.errors import InvalidInput, MemvaultError
    from app.interfaces.hooks import HookInput, run_hook
    from app.services import Services
    from app.vaults import get_or_create_vault

    out = sys.stdout
    try:
        if args.token_budget < 1:
            raise InvalidInput(f"--token-budget must be at least 1, got {args.token_budget}")
        data = HookInput.parse(sys.stdin.read())
    except MemvaultError as exc:  # exit 1, never 2: Claude Code blocks the prompt on exit code 2
        print(f"memvault: {exc}", file=sys.stderr)
        return 1

    async def main() -> str | None:
        services = await Services.start()
        try:
            vault = await get_or_create_vault(services.db, args.vault)
            return await run_hook(services, vault, args.event, data, token_budget=args.token_budget)
        finally:
            await services.close()

    try:
        with contextlib.redirect_stdout(sys.stderr):  # only the hook's answer goes to stdout
            answer = asyncio.run(main())
    except MemvaultError as exc:
        print(f"memvault: {exc}", file=sys.stderr)
        return 1
    if answer:
        print(answer, file=out)
    return 0
