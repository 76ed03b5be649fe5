"""Running the service: the API under uvicorn and the Procrastinate worker in the same event loop."""

from __future__ import annotations

import asyncio
import logging
import time

from app.auth_limit import uvicorn_proxy_options
from app.db.connector import redact
from app.db.migrate import upgrade
from app.services import Services, database_url, service_replica_urls, service_url
from app.settings import LOG_FORMAT, get_settings

__all__ = ["LOG_FORMAT", "listen", "run_worker", "serve", "serve_processes"]
log = logging.getLogger("memvault")


async def _worker_loop(services: Services, url: str, concurrency: int) -> None:
    """The job worker, for as long as the process runs: a PostgreSQL restart, crash or outage stops procrastinate's
    worker (its listener and heartbeat lose their connection); it is started again, on a new pool, after a pause
    that doubles from ``worker_backoff_s`` to ``worker_backoff_max_s`` while the server stays away. Only a
    cancellation (the process stopping) ends it."""
    from procrastinate.worker import Worker

    from app.worker.app import act_as_job, connector_for
    from app.worker.app import app as jobs_app
    from app.worker.context import worker_context

    from app.background.stalled import retry_stalled_jobs

    from app.db.reachability import Backoff

    jobs_app.perform_import_paths()  # the tasks (run_worker_async does it; the Worker built here needs it too)
    settings = services.settings
    pause = Backoff(settings.worker_backoff_s, settings.worker_backoff_max_s)
    previous: int | None = None  # the id of the worker that lost the database, if it could not unregister
    while True:
        worker: Worker | None = None
        started = time.monotonic()
        try:
            with jobs_app.replace_connector(connector_for(url)) as app:
                async with app.open_async():
                    if previous is not None:  # its jobs (none runs any more) go back to the queue now, not in 30 s
                        await app.job_manager.unregister_worker(previous)
                        previous = None
                    # The jobs of a worker that died mid-job (its heartbeat stopped) run again; then every minute.
                    await retry_stalled_jobs(app.job_manager, seconds_since_heartbeat=settings.worker_stalled_s)
                    worker = Worker(app=app, concurrency=concurrency, install_signal_handlers=False,
                                    name="memvault-worker", worker_middleware=[act_as_job],
                                    additional_context=worker_context(services),
                                    update_heartbeat_interval=settings.worker_heartbeat_s,
                                    stalled_worker_timeout=settings.worker_stalled_s)
                    await worker.run()
            reason = "it stopped (a side task lost the database)"
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the database went away (ConnectorException, a pool timeout), or a fault of ours
            reason = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
            log.debug("job worker failed", exc_info=exc)
        if worker is not None and worker.worker_id is not None:
            previous = worker.worker_id
        delay = pause.next(ran_for=time.monotonic() - started)
        log.warning("job worker: %s; starting again in %.1f s, once the database answers", reason, delay)
        await asyncio.sleep(delay)
        await services.db.reachability.wait_up()  # a probe every 0.5 s: back within one of the server


def is_loopback(host: str) -> bool:
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name or a wildcard other than loopback: reachable from elsewhere


async def _check_access(services: Services, host: str, port: int, *, local_key: bool) -> None:
    """``--local-key``: make (once) and show the local admin key; a non-loopback bind with no active key: refuse."""
    from app.errors import ConfigError
    from app.keys import active_key_count, ensure_local_key, local_key_paths

    if local_key:
        key, created, path = await ensure_local_key(services.db, local_key_paths(services.settings))
        print(f"memvault: {'created a' if created else 'the'} local admin key, in {path} (mode 0600); use it:\n"
              f"  export MEMVAULT_API_KEY=$(cat {path})\n"
              f'  curl -H "Authorization: Bearer $MEMVAULT_API_KEY" http://{host}:{port}/v1/vaults',
              flush=True)
    if not is_loopback(host) and await active_key_count(services.db) == 0:
        raise ConfigError(f"refusing to listen on {host}: no API key exists, so nobody could use the API (and it "
                          "must never be open)",
                          hint="create one first: `memvault key create --scope admin --name ops`, or bind 127.0.0.1")


def listen(host: str, port: int):
    """The API's socket, bound before anything else is started, so a port in use is one clear error (exit 4,
    a conflict) rather than the address printed, then uvicorn's bind error and its exit code 3 ("not found")."""
    import socket

    from app.errors import Conflict, InvalidInput

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise InvalidInput(f"cannot listen on {host}:{port}: {exc.strerror}",
                           hint="pass --host with an address of this machine (MEMVAULT_HOST), e.g. 127.0.0.1") from exc
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does: a restart reuses the port at once
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise Conflict(f"cannot listen on {host}:{port}: {exc.strerror or exc}",
                       hint="is memvault (or something else) already serving there? stop it, or pass --port N "
                            "(MEMVAULT_PORT)") from exc
    return sock


async def _prepare(host: str, port: int, *, local_key: bool) -> tuple[str, str, Services]:
    """Migrate as the tables' owner, then open the service's pool (its login role) and check access: the owner's
    URL, the service's, and the open services."""
    settings = get_settings()
    owner = database_url(settings)
    await asyncio.to_thread(upgrade, owner)  # as the tables' owner; from here on, as the service's login role
    url = service_url(settings, owner)
    services = await Services.start(settings, url=url, ddl_url=owner, replica_urls=service_replica_urls(settings))
    try:
        await _check_access(services, host, port, local_key=local_key)
    except BaseException:
        await services.close()
        raise
    return owner, url, services


def serve_processes(*, host: str | None, port: int | None, workers: int, worker: bool = True,
                    local_key: bool = False) -> int:
    """``workers`` API processes on one port (uvicorn's supervisor; each builds its own app and pool:
    ``app.api.app.served_app``) and the job worker in a process of its own (``memvault worker``): Python runs one
    core per process, and recalls, writes and jobs no longer queue behind each other in one event loop. The
    children read both URLs from the environment, so none provisions or migrates the database again."""
    import os
    import subprocess
    import sys

    import uvicorn

    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT)
    settings = get_settings()
    host, port = host or settings.host, port or settings.port
    listen(host, port).close()  # uvicorn's supervisor binds it again; this only fails fast when it is taken

    async def prepare() -> tuple[str, str]:
        owner, url, services = await _prepare(host, port, local_key=local_key)
        await services.close()
        return owner, url

    owner, url = asyncio.run(prepare())
    os.environ["MEMVAULT_DATABASE_URL"] = owner
    os.environ["MEMVAULT_SERVICE_DATABASE_URL"] = url
    get_settings.cache_clear()
    jobs = subprocess.Popen([sys.executable, "-m", "app.cli", "worker"]) if worker else None
    print(f"memvault: API on http://{host}:{port} ({workers} processes; docs at /docs), database {redact(url)}"
          + (f"; job worker pid {jobs.pid}" if jobs else ""), flush=True)
    try:
        uvicorn.run("app.api.app:served_app", factory=True, host=host, port=port, workers=workers,
                    log_level="info", **uvicorn_proxy_options(settings.trusted_proxies))
    finally:
        if jobs is not None:
            jobs.terminate()
            try:
                jobs.wait(30)
            except subprocess.TimeoutExpired:
                jobs.kill()
    return 0


async def serve(*, host: str | None, port: int | None, worker: bool = True, local_key: bool = False) -> int:
    """The API and the job worker in one process, one event loop."""
    import uvicorn

    from app.api.app import create_app

    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT)
    settings = get_settings()
    host = host or settings.host
    port = port or settings.port
    sock = listen(host, port)
    try:
        _, url, services = await _prepare(host, port, local_key=local_key)
    except BaseException:
        sock.close()
        raise
    app = create_app(settings, services=services)
    config = uvicorn.Config(app, host=host, port=port, log_level="info",
                            **uvicorn_proxy_options(settings.trusted_proxies))
    server = uvicorn.Server(config)
    # The worker outlives the database's restarts (``_worker_loop`` starts it again), and the API does not depend
    # on it: the API serves until the process is asked to stop, then the worker is stopped.
    jobs = asyncio.create_task(_worker_loop(services, url, settings.worker_concurrency), name="worker") \
        if worker else None
    print(f"memvault: API on http://{config.host}:{config.port} (docs at /docs), database {redact(url)}", flush=True)
    try:
        await server.serve(sockets=[sock])
    finally:
        if jobs is not None:
            jobs.cancel()
            await asyncio.gather(jobs, return_exceptions=True)
        await services.close()
        sock.close()
    return 0


async def run_worker(*, concurrency: int | None) -> int:
    """``memvault worker``: the job worker alone; it waits for a database that is not up yet, and outlives its
    restarts."""
    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT)
    settings = get_settings()
    owner = database_url(settings)
    url = service_url(settings, owner)
    services = await Services.start_when_reachable(settings, url=url, ddl_url=owner)
    try:
        await _worker_loop(services, url, concurrency or settings.worker_concurrency)
    finally:
        await services.close()
    return 0
