"""``memvault mcp`` and ``memvault hook EVENT``: the agent-facing interfaces (``app.interfaces.mcp``,
``app.interfaces.hooks``)."""

from __future__ import annotations

import argparse

from app.interfaces import hook_client


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
    hook_client.add_arguments(p)
    p.set_defaults(func=_hook)


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
        from app.interfaces.access import open_vault_as
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


def _hook(args: argparse.Namespace) -> int:
    """``memvault hook`` reached through the full parser (``app.cli`` normally hands it to the thin entry first)."""
    return hook_client.run(args)


def _hook(args: argparse.Namespace) -> int:
    """``memvault hook`` reached through the full parser (``app.cli`` normally hands it to the thin entry first)."""
    return hook_client.run(args)

