"""``memvault hook EVENT``'s entry: a thin client of the running service that imports the standard library only.

A Claude Code hook is a new process per event, so what the agent waits for is mostly this process's start: with
the full client (httpx, pydantic, the API's models, app.settings) its imports alone took ~360 ms of the 430 ms a
prompt's hook took. Here the event is read, sent over ``http.client`` (one keep-alive connection) to the service
and answered with the same :func:`app.interfaces.hooks.handle` that the in-process path runs, so the output
conventions are one code. Only when nothing listens at the service's address (the first connection refused,
nothing sent) is the work done in this process (``app.interfaces.hooks.hook_in_process``: the embedder's load,
seconds).

The key and the address are found as the rest of memvault finds them (``--key`` / ``MEMVAULT_API_KEY``, ``--url`` /
``MEMVAULT_API_URL`` / ``http://MEMVAULT_HOST:MEMVAULT_PORT``): :func:`agent_settings` reads those four variables
as ``app.settings.Settings`` does (prefix ``MEMVAULT_``, any case), without importing pydantic; a unit test holds
the two to the same answers. It is the one reader of the environment besides app.settings, for that reason.

Read-your-writes: the client keeps the highest ``X-Memvault-LSN`` its writes were answered with and sends it on
each request after (``app.lsn``), so a hook that writes then reads is not served by a standby that lags behind.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import sys
import time
from collections.abc import Coroutine
from datetime import datetime
from typing import Any, TypeVar
from urllib.parse import quote, urlsplit

from app import errors
from app.interfaces.hooks import EVENTS, HookInput, handle, hook_in_process
from app.lsn import LSN_HEADER, HighestLSN

T = TypeVar("T")
DEFAULT_TOKEN_BUDGET = 1000
# The hook's own recall: fast thinking (no cascade, no CRAG, no multi-query: a prompt must not wait for them).
HOOK_THINKING = "fast"


class ServiceDown(Exception):
    """No service listens at the address (the first connection was refused): the work is done in-process."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``memvault hook`` (the full CLI's parser and this entry's are one definition)."""
    p.add_argument("event", choices=EVENTS)
    p.add_argument("--vault", metavar="NAME", required=True, help="the vault; created if it does not exist")
    p.add_argument("--key", metavar="KEY", help="memvault API key with scope write (default MEMVAULT_API_KEY)")
    p.add_argument("--token-budget", type=int, default=DEFAULT_TOKEN_BUDGET,
                   help="cl100k tokens of memories handed to the model per prompt (default 1000)")
    p.add_argument("--url", default=None, help="the running service (default MEMVAULT_API_URL, else "
                                               "http://127.0.0.1:MEMVAULT_PORT); none there: the work is done here")


def agent_settings(environ: dict[str, str] | None = None) -> dict[str, str | None]:
    """``api_key``, ``api_url``, ``host``, ``port`` as app.settings reads them (defaults included)."""
    env = {k.upper(): v for k, v in (os.environ if environ is None else environ).items()}
    return {"api_key": env.get("MEMVAULT_API_KEY"), "api_url": env.get("MEMVAULT_API_URL"),
            "host": env.get("MEMVAULT_HOST", "127.0.0.1"), "port": env.get("MEMVAULT_PORT", "8420")}


def service_url(url: str | None, settings: dict[str, str | None]) -> str:
    """``--url``, else MEMVAULT_API_URL, else the address ``memvault serve`` binds (loopback for a wildcard)."""
    if url or settings["api_url"]:
        return url or settings["api_url"]  # type: ignore[return-value]
    host = settings["host"]
    host = "127.0.0.1" if host in ("0.0.0.0", "::", "", None) else host
    return f"http://{host}:{settings['port']}"


class HookHTTP:
    """The service's API over one keep-alive ``http.client`` connection: JSON in, JSON out, the service's error
    classes for error answers (as app.client raises them), a 503 resent once after its Retry-After."""

    def __init__(self, url: str, key: str, *, timeout: float = 10.0, max_wait: float = 2.0) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise errors.InvalidInput(f"the service's URL {url!r} is not http(s)://HOST[:PORT]",
                                      hint="set MEMVAULT_API_URL or pass --url, e.g. http://127.0.0.1:8420")
        kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        self.conn = kind(parts.hostname, parts.port, timeout=timeout)
        self.prefix = parts.path.rstrip("/")
        self.key = key
        self.max_wait = max_wait
        self.lsn = HighestLSN()
        self.sent = 0  # requests that reached the service (the in-process fallback only before the first)

    def request(self, method: str, path: str, body: dict[str, Any] | None = None, *,
                idempotent_write: bool = False) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {self.key}", "Accept": "application/json", **self.lsn.headers()}
        data = None
        if body is not None:
            data = json.dumps(body, ensure_ascii=False, default=_iso).encode()
            headers["Content-Type"] = "application/json"
        if idempotent_write:  # a resent write is applied once
            headers["Idempotency-Key"] = os.urandom(16).hex()
        for attempt in range(2):
            status, reason, answer, retry_after = self._exchange(method, self.prefix + path, data, headers)
            if status != 503 or attempt == 1:
                break
            time.sleep(min(max(_seconds(retry_after), 0.0), self.max_wait))
        if 200 <= status < 300:
            return answer
        raise _error(status, reason, answer, method, path)

    def _exchange(self, method: str, path: str, data: bytes | None,
                  headers: dict[str, str]) -> tuple[int, str, dict[str, Any], str | None]:
        if self.sent == 0:
            try:
                self.conn.connect()
            except TimeoutError as exc:  # something is there but does not answer: not a reason to do the work here
                raise errors.MemvaultError(f"the service at {self.conn.host}:{self.conn.port} did not accept a "
                                           "connection in time", hint="is `memvault serve` healthy?") from exc
            except OSError as exc:  # refused, no such host: no service there
                raise ServiceDown(str(exc)) from exc
        try:
            self.conn.request(method, path, body=data, headers=headers)
            response = self.conn.getresponse()
            raw = response.read()
        except (http.client.HTTPException, OSError) as exc:
            self.conn.close()
            raise errors.MemvaultError(f"the service failed on {method} {path}: {exc or type(exc).__name__}",
                                       hint="is `memvault serve` running and healthy? (GET /health)") from exc
        self.sent += 1
        self.lsn.saw(response.getheader(LSN_HEADER))
        try:
            answer = json.loads(raw) if raw else {}
        except ValueError:
            answer = {}
        return response.status, response.reason, answer if isinstance(answer, dict) else {}, \
            response.getheader("Retry-After")

    def close(self) -> None:
        self.conn.close()


def _iso(value: Any) -> str:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON")


def _seconds(value: str | None) -> float:
    try:
        return float(value) if value else 0.5
    except ValueError:
        return 0.5


def _error(status: int, reason: str, body: dict[str, Any], method: str, path: str) -> errors.MemvaultError:
    detail, hint = body.get("detail"), body.get("hint")
    message = f"{detail or reason} ({status} on {method} {path})"
    kind = errors.BY_STATUS.get(status)
    return kind(message, hint=hint) if kind is not None else errors.MemvaultError(message, hint=hint)


def _seg(value: str) -> str:
    return quote(value, safe="")


class ServiceVault:
    """The vault through the running service (``HookHTTP``); created there on first use when missing, as the
    in-process hook creates it (which takes a key for every vault). Its coroutines do blocking I/O and never
    suspend: :func:`run_sync` drives them without an event loop (asyncio alone costs a hook ~40-60 ms of imports)."""

    def __init__(self, http: HookHTTP, name: str) -> None:
        self.http = http
        self.name = name

    def _created(self, method: str, path: str, body: dict[str, Any], **kw: Any) -> dict[str, Any]:
        try:
            return self.http.request(method, path, body, **kw)
        except errors.NotFound as exc:
            if "unknown vault" not in exc.message:
                raise
            self.http.request("POST", "/v1/vaults", {"name": self.name})
            return self.http.request(method, path, body, **kw)

    async def recall_text(self, query: str, token_budget: int) -> str:
        out = self._created("POST", f"/v1/vaults/{_seg(self.name)}/recall",
                            {"query": query, "format": "text", "token_budget": token_budget,
                             "thinking": HOOK_THINKING})
        return out.get("text") or ""

    async def record(self, session_id: str, role: str, content: str, said_at: datetime) -> None:
        turn = {"role": role, "content": content, "said_at": said_at}
        self._created("POST", f"/v1/vaults/{_seg(self.name)}/sessions/{_seg(session_id)}/turns", {"turns": [turn]},
                      idempotent_write=True)

    async def close(self, session_id: str) -> None:
        try:
            self.http.request("POST", f"/v1/vaults/{_seg(self.name)}/sessions/{_seg(session_id)}/close")
        except (errors.Conflict, errors.NotFound):  # already closed (the worker's idle close), or nothing recorded
            pass


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """The result of a coroutine that never suspends (``ServiceVault``'s), with no event loop."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value
    coro.close()
    raise RuntimeError("a hook's service call suspended: it must do blocking I/O only")


def over_http(url: str, key: str, vault: str, event: str, data: HookInput, token_budget: int) -> str | None:
    """What the hook prints, asked of the service at ``url`` (ServiceDown: nothing listens there)."""
    client = HookHTTP(url, key)
    try:
        return run_sync(handle(ServiceVault(client, vault), event, data, token_budget=token_budget))
    finally:
        client.close()


def run(args: argparse.Namespace) -> int:
    """The hook for parsed arguments: exit 0 (its answer, if any, on stdout) or 1 (a message on stderr), never 2
    (Claude Code blocks the prompt on exit code 2)."""
    try:
        if args.token_budget < 1:
            raise errors.InvalidInput(f"--token-budget must be at least 1, got {args.token_budget}")
        data = HookInput.parse(sys.stdin.read())
        settings = agent_settings()
        key = args.key or settings["api_key"]
        if not key:
            raise errors.Unauthorized("an API key is required", hint="set MEMVAULT_API_KEY or pass --key; create "
                                                                    "one with `memvault key create --scope write`")
        url = service_url(args.url, settings)
        try:
            answer = over_http(url, key, args.vault, args.event, data, args.token_budget)
        except ServiceDown:  # nothing listens there and nothing was sent: the work is done in this process
            answer = hook_in_process(args.vault, args.event, data, key, token_budget=args.token_budget)
    except errors.MemvaultError as exc:
        print(f"memvault: {exc}", file=sys.stderr)
        return 1
    if answer:
        print(answer)
    return 0


def main(argv: list[str] | None = None) -> int:
    """``memvault hook EVENT ...`` (``app.cli`` hands ``hook`` here before importing anything else); also
    ``python -m app.interfaces.hook_client EVENT ...``."""
    p = argparse.ArgumentParser(prog="memvault hook", description="A Claude Code hook: reads the event's JSON on "
                                "stdin (see the README).")
    add_arguments(p)
    return run(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
