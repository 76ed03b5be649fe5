"""The API served for real on 127.0.0.1 (a free port) by uvicorn in a thread with its own event loop, for tests
that need a network client (schemathesis) or a process apart from the test's loop. It stops by itself when the
``with`` block ends."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

from app.settings import Settings


@contextmanager
def live_api(settings: Settings, db_url: str) -> Iterator[str]:
    """Yields the base URL (``http://127.0.0.1:PORT``) of the API on ``db_url``."""
    import uvicorn

    from app.api.app import create_app

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    from app.auth_limit import uvicorn_proxy_options

    server = uvicorn.Server(uvicorn.Config(create_app(settings, url=db_url), log_level="warning", lifespan="on",
                                           **uvicorn_proxy_options(settings.trusted_proxies)))
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True,
                              name="live-api")
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the API did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


def wait_serving(http, server, log_path, *, key_file=None, timeout_s: float = 180) -> None:
    """Until ``memvault serve`` (the process ``server``, its output in ``log_path``) answers ``/health`` with 200 and,
    with ``--local-key``, has written ``key_file``; fails with the end of its log if it exits or takes too long."""
    from pathlib import Path

    deadline = time.monotonic() + timeout_s
    while True:
        assert server.poll() is None, Path(log_path).read_text()[-3000:]
        assert time.monotonic() < deadline, Path(log_path).read_text()[-3000:]
        try:
            if http.get("/health").status_code == 200 and (key_file is None or Path(key_file).exists()):
                return
        except Exception:  # noqa: BLE001 - not listening yet (httpx.TransportError)
            pass
        time.sleep(0.3)


@asynccontextmanager
async def mcp_http(env: dict[str, str], vault: str, *, stop_s: float = 30) -> AsyncIterator[str]:
    """`memvault mcp --http --port 0 --vault VAULT` in a process of its own; yields the URL its ready line names,
    and stops it (SIGTERM) afterwards."""
    import sys
    from pathlib import Path

    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "app.cli", "mcp", "--http", "--port", "0", "--vault", vault, env=env,
        cwd=str(Path(__file__).resolve().parents[2]), stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE)
    try:
        url = None
        while url is None:
            line = (await asyncio.wait_for(proc.stderr.readline(), 120)).decode()
            assert line, "memvault mcp --http exited before it was ready"
            if "ready on http://127.0.0.1:" in line:
                url = line.split("ready on ")[1].split()[0]
        yield url
    finally:
        proc.terminate()
        await asyncio.wait_for(proc.wait(), stop_s)
