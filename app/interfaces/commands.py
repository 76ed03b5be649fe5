"""``memvault mcp`` and ``memvault hook EVENT``: the agent-facing interfaces (``app.interfaces.mcp``,
``app.interfaces.hooks``)."""

from __future__ import annotations

import argparse

from app.interfaces.hooks import EVENTS


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("mcp", help="serve the Model Context Protocol on stdio, or streamable HTTP with --http "
                                   "(tools: recall, remember, append_turns, forget, feedback)")
    p.add_argument("--vault", metavar="NAME", help="the tools' default vault; created if it does not exist "
                                                   "(default: the vault the key is bound to)")
    p.add_argument("--key", metavar="KEY", help="memvault API key for stdio (default MEMVAULT_API_KEY); over --http "
                                                "none is needed: each request sends its own")
    p.add_argument("--http", action="store_true", help="streamable HTTP on 127.0.0.1 (endpoint /mcp) instead of stdio")
    p.add_argument("--port", type=int, default=8421, help="port for --http (default 8421; 0: any free port)")
    p.set_defaults(func=_mcp)

    p = sub.add_parser("hook", help="a Claude Code hook: reads the event's JSON on stdin (see the README)")
    p.add_argument("event", choices=EVENTS)
    p.add_argument("--vault", metavar="NAME", required=True, help="the vault; created if it does not exist")
    p.add_argument("--key", metavar="KEY", help="memvault API key with scope write (default MEMVAULT_API_KEY)")
    p.add_argument("--token-budget", type=int, default=1000,
                   help="cl100k tokens of memories handed to the model per prompt (default 1000)")
    p.add_argument("--url", default=None, help="the running service (default MEMVAULT_API_URL, else "
                                               "http://127.0.0.1:MEMVAULT_PORT); none there: the work is done here")
    p.set_defaults(func=_hook)


async def open_vault_as(services, key: str | None, vault: str | None, scope: str):
    """The key's principal (the actor of everything after), and ``vault`` opened for ``scope`` (created when
    missing, which takes a key for every vault); None when no vault is named and the key is not bound to one."""
    from app.auth import authenticate
    from app.db.connector import act_as
    from app.errors import NotFound, Unauthorized
    from app.vaults import create_vault, get_vault

    if not key:
        raise Unauthorized("an API key is required", hint="set MEMVAULT_API_KEY or pass --key; create one with "
                                                         "`memvault key create --scope write`")
    principal = await authenticate(services.db, key, services.verified_secrets)
    act_as(principal.actor)
    vault = vault or principal.vault_name
    if vault is None:
        return principal, None
    principal.require(vault, scope)
    try:
        return principal, await get_vault(services.db, vault)
    except NotFound:
        principal.require(None, "write")
        return principal, await create_vault(services.db, vault)


def _key(args: argparse.Namespace) -> str | None:
    from app.settings import get_settings

    setting = get_settings().api_key
    return args.key or (setting.get_secret_value() if setting else None)


def _mcp(args: argparse.Namespace) -> int:
    import asyncio
    import contextlib
    import logging
    import sys

    from app.interfaces import mcp
    from app.settings import LOG_FORMAT, get_settings

    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format=LOG_FORMAT)
    log = logging.getLogger("app.interfaces.mcp")
    key = _key(args)

    async def main() -> int:
        if not args.http:
            ready = asyncio.ensure_future(_stdio_tools(key, args.vault))
            try:
                await mcp.serve_stdio(ready, args.vault)
            finally:
                await _close_when_started(ready)
            return 0
        import uvicorn

        from app.services import Services, database_url, service_url

        # stdout carries nothing here, but a library's prints while starting belong with the logs all the same.
        with contextlib.redirect_stdout(sys.stderr):
            # As the API: logged in as the service's role (memvault_service: no superuser, row-level security),
            # the tables' owner only for a vault's index DDL.
            settings = get_settings()
            owner = database_url(settings)
            services = await Services.start(settings, url=service_url(settings, owner), ddl_url=owner)
        try:
            if args.vault:  # the operator's default vault, made with this process's login; each request's key
                await _ensure_vault(services, args.vault)  # then decides what that request may do with it
            from app.auth_limit import uvicorn_proxy_options

            config = uvicorn.Config(mcp.http_app(services, args.vault), host="127.0.0.1", port=args.port,
                                    log_level="warning", **uvicorn_proxy_options(settings.trusted_proxies))
            server = uvicorn.Server(config)
            task = asyncio.create_task(server.serve())
            while not server.started and not task.done():
                await asyncio.sleep(0.05)
            if server.started:
                port = server.servers[0].sockets[0].getsockname()[1]
                log.info("memvault mcp: ready on http://127.0.0.1:%d/mcp (default vault %s; each request sends "
                         "its own API key)", port, args.vault)
            await task
            return 0
        finally:
            await services.close()

    async def _stdio_tools(key: str | None, vault_name: str | None):
        # The imports and the embedder's load happen in a thread, so the protocol is answered meanwhile.
        models = await asyncio.to_thread(_load_models)
        from app.services import Services, database_url, service_url

        # As the API: logged in as the service's role (memvault_service), the owner only for index DDL.
        settings = get_settings()
        owner = database_url(settings)
        services = await Services.start(settings, url=service_url(settings, owner), ddl_url=owner,
                                        model_cache=models, owns_models=True)
        try:
            principal, vault = await open_vault_as(services, key, vault_name, "read")
        except BaseException:
            await services.close()
            raise
        default = vault.name if vault is not None else None
        log.info("memvault mcp: ready on stdio (default vault %s) with key %s", default, principal.key_id)
        return mcp.MemvaultTools(services, default, principal)

    async def _close_when_started(ready) -> None:
        if not ready.done():
            ready.cancel()
        try:
            tools = await ready
        except BaseException as exc:  # noqa: BLE001 - a start that failed was each tool call's error already
            if not isinstance(exc, asyncio.CancelledError):
                log.error("memvault mcp: could not start: %s", exc)
            return
        await tools.services.close()

    return asyncio.run(main())


def _load_models():  # noqa: ANN202 - app.models.registry.ModelCache, imported here (off the event loop)
    """The model cache the services will own, with the embedder loaded (in a thread: the protocol is answered
    meanwhile)."""
    from app.models.registry import ModelCache
    import app.services  # noqa: F401  (imported here, off the event loop)
    from app.settings import get_settings

    settings = get_settings()
    models = ModelCache(settings.model_threads)
    models.embedder(settings)  # Services.start finds it loaded
    return models


async def _ensure_vault(services, name: str) -> None:
    from app.errors import NotFound
    from app.vaults import create_vault, get_vault

    try:
        await get_vault(services.db, name)
    except NotFound:
        await create_vault(services.db, name)


def api_url(args: argparse.Namespace) -> str:
    from app.settings import get_settings

    settings = get_settings()
    if args.url or settings.api_url:
        return args.url or settings.api_url
    host = "127.0.0.1" if settings.host in ("0.0.0.0", "::", "") else settings.host
    return f"http://{host}:{settings.port}"


def _hook(args: argparse.Namespace) -> int:
    """Over HTTP to the running service when one answers (the hook's process loads no model: ~0.3-0.45 s of CPU
    here, Python's start and imports), in this process otherwise (the embedder's load: seconds)."""
    import asyncio
    import contextlib
    import sys

    import httpx

    from app.errors import InvalidInput, MemvaultError
    from app.interfaces.hooks import HookInput

    out = sys.stdout
    try:
        if args.token_budget < 1:
            raise InvalidInput(f"--token-budget must be at least 1, got {args.token_budget}")
        data = HookInput.parse(sys.stdin.read())
    except MemvaultError as exc:  # exit 1, never 2: Claude Code blocks the prompt on exit code 2
        print(f"memvault: {exc}", file=sys.stderr)
        return 1
    key = _key(args)

    async def over_http() -> str | None:
        from app.client import AsyncMemVault
        from app.errors import Unauthorized
        from app.interfaces.hooks import ServiceVault, handle

        if not key:
            raise Unauthorized("an API key is required", hint="set MEMVAULT_API_KEY or pass --key; create one "
                                                             "with `memvault key create --scope write`")
        async with AsyncMemVault(api_url(args), key, timeout=10, retries=1, max_wait=2) as client:
            return await handle(ServiceVault(client, args.vault), args.event, data, token_budget=args.token_budget)

    async def in_process() -> str | None:
        from app.interfaces.hooks import run_hook
        from app.services import Services

        services = await Services.start()
        try:
            _, vault = await open_vault_as(services, key, args.vault, "write")
            return await run_hook(services, vault, args.event, data, token_budget=args.token_budget)
        finally:
            await services.close()

    try:
        with contextlib.redirect_stdout(sys.stderr):  # only the hook's answer goes to stdout
            try:
                answer = asyncio.run(over_http())
            except httpx.ConnectError:  # no service there: nothing was sent, do the work here
                answer = asyncio.run(in_process())
    except MemvaultError as exc:
        print(f"memvault: {exc}", file=sys.stderr)
        return 1
    except httpx.HTTPError as exc:
        print(f"memvault: the service at {api_url(args)} failed: {exc}", file=sys.stderr)
        return 1
    if answer:
        print(answer, file=out)
    return 0
