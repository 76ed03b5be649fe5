"""The API under uvicorn on a loopback port, in the test's event loop: requests really run at once (the ASGI test
client answers one at a time)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from app.db.cluster import free_port


@asynccontextmanager
async def served(services) -> AsyncIterator[str]:
    import uvicorn

    from app.api.app import create_app

    port = free_port()
    from app.auth_limit import uvicorn_proxy_options

    server = uvicorn.Server(uvicorn.Config(create_app(services.settings, services=services), host="127.0.0.1",
                                           port=port, log_level="warning",
                                           **uvicorn_proxy_options(services.settings.trusted_proxies)))
    task = asyncio.create_task(server.serve())
    try:
        while not server.started:
            assert not task.done(), "uvicorn did not start"
            await asyncio.sleep(0.02)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 10)
