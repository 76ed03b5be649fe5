"""Running the service: the API under uvicorn and the Procrastinate worker in the same event loop."""

from __future__ import annotations

import asyncio
import logging

from app.db.migrate import upgrade
from app.services import Services, database_url
from app.settings import get_settings

log = logging.getLogger("memvault")
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


async def _worker_loop(services: Services, url: str, concurrency: int) -> None:
    from app.worker.app import app as jobs_app
    from app.worker.app import connector_for
    from app.worker.context import bind_services

    bind_services(services)
    with jobs_app.replace_connector(connector_for(url)) as app:
        async with app.open_async():
            await app.run_worker_async(concurrency=concurrency, install_signal_handlers=False,
                                       name="memvault-worker")


async def serve(*, host: str | None, port: int | None, worker: bool = True) -> int:
    import uvicorn

    from app.api.app import create_app

    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT)
    settings = get_settings()
    url = database_url(settings)
    await asyncio.to_thread(upgrade, url)
    services = await Services.start(settings, url=url)
    app = create_app(settings, services=services)
    config = uvicorn.Config(app, host=host or settings.host, port=port or settings.port, log_level="info")
    server = uvicorn.Server(config)
    tasks = [asyncio.create_task(server.serve(), name="api")]
    if worker:
        tasks.append(asyncio.create_task(_worker_loop(services, url, settings.worker_concurrency), name="worker"))
    print(f"memvault: API on http://{config.host}:{config.port} (docs at /docs), database {url}", flush=True)
    try:
        done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for task in pending:
            task.cancel()
        for task in done:
            task.result()
    finally:
        await services.close()
    return 0


async def run_worker(*, concurrency: int | None) -> int:
    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT)
    settings = get_settings()
    url = database_url(settings)
    services = await Services.start(settings, url=url)
    try:
        await _worker_loop(services, url, concurrency or settings.worker_concurrency)
    finally:
        await services.close()
    return 0
