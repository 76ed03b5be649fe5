"""A Python client of the memvault API: ``MemVault`` (blocking) and ``AsyncMemVault`` (asyncio), typed with the
API's own Pydantic models (``app.write.schemas``, ``app.read.schemas``, ``app.api.schemas``).

    from app.client import MemVault

    with MemVault("http://127.0.0.1:8420", key) as mv:
        mv.create_vault("alice")
        mv.append_turns("alice", "s1", [{"role": "user", "content": "I moved to Tainan last week."}])
        mv.close_session("alice", "s1")
        for card in mv.recall("alice", "where do I live now?").cards:
            print(card["id"], card["text"])

The package is ``memvault`` on PyPI but its import name is ``app``, so the client is ``app.client`` (a second
top-level package only to rename it would be one more name to keep in step).

One definition of every operation (``_Operations``): each builds a ``Call`` (method, path, body, how to read the
answer) and hands it to its client's ``_send``, the only code that differs between the two: the blocking one
sends with ``httpx.Client``, the other awaits ``httpx.AsyncClient`` (so ``AsyncMemVault``'s methods return
awaitables of the same models). Both resend a request the service answered 503 (the database is restarting) after
its ``Retry-After``, up to ``retries`` times; writes carry an ``Idempotency-Key``, so a resent write is applied once.
An error answer raises the service's own error class (``app.errors``: ``NotFound``, ``InvalidInput``...) with the
API's ``detail`` and ``hint``.

Read-your-writes with hot standbys (``MEMVAULT_REPLICA_URLS``): a write's answer carries the WAL position of its
commit (``X-Memvault-LSN``); each client remembers the highest it was handed and sends it back on every request
after, so a read is served by a standby only once that standby has replayed this client's writes (else by the
primary). Another client instance (another process) has positions of its own.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from email.utils import parsedate_to_datetime
from typing import Any, Generic, Literal, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel

from app import errors
from app.api.schemas import (
    EntityItem,
    MemoryItem,
    Neighbourhood,
    Page,
    SessionItem,
    TurnItem,
    VaultCreate,
    VaultOut,
)
from app.lsn import LSN_HEADER, HighestLSN, format_lsn
from app.read.schemas import RecallIn, RecallOut
from app.write.schemas import (
    CloseOut,
    FeedbackIn,
    FeedbackOut,
    ItemOut,
    MemoryIn,
    MemoryOut,
    TurnIn,
    TurnsIn,
    TurnsOut,
    WriteOut,
)

T = TypeVar("T")
DEFAULT_URL = "http://127.0.0.1:8420"



class ServiceError(errors.MemvaultError):
    """An answer of the service with a status the other error classes do not name (a 500, a 502)."""

    def __init__(self, message: str, *, status: int, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.status = status


@dataclass(frozen=True, slots=True)
class Call(Generic[T]):
    """One request and how to read its answer; built once, so a resend carries the same Idempotency-Key."""

    method: str
    path: str
    read: Callable[[httpx.Response], T]
    body: BaseModel | None = None
    params: dict[str, Any] = field(default_factory=dict)
    idempotency_key: str | None = None


def _model(model: type[T]) -> Callable[[httpx.Response], T]:
    return lambda r: model.model_validate_json(r.content)  # type: ignore[attr-defined]


def _nothing(r: httpx.Response) -> None:
    return None


def _lines(r: httpx.Response) -> list[dict[str, Any]]:
    return [json.loads(line) for line in r.text.splitlines() if line.strip()]


def _seg(value: str | int) -> str:
    return quote(str(value), safe="")


class _Core:
    """What both clients share: the request a ``Call`` becomes, the error an answer means, the wait before a
    resend. No I/O."""

    def __init__(self, key: str | None, retries: int, max_wait: float) -> None:
        self.key = key
        self.retries = retries
        self.max_wait = max_wait
        self.lsn = HighestLSN()  # of this client's writes: sent back so that a standby serves only what saw them

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"} if self.key else {}

    def request(self, http: httpx.Client | httpx.AsyncClient, call: Call) -> httpx.Request:
        headers = self.lsn.headers()
        if call.idempotency_key:
            headers["Idempotency-Key"] = call.idempotency_key
        content = call.body.model_dump_json(exclude_unset=True).encode() if call.body is not None else None
        if content is not None:
            headers["Content-Type"] = "application/json"
        params = {k: v for k, v in call.params.items() if v is not None}
        return http.build_request(call.method, call.path, content=content, params=params, headers=headers)

    def wait(self, response: httpx.Response, attempt: int) -> float | None:
        """Seconds to wait before resending, or None: not a 503, or no resend left."""
        if response.status_code != 503 or attempt >= self.retries:
            return None
        value = response.headers.get("Retry-After", "")
        try:
            seconds = float(value)
        except ValueError:
            try:
                seconds = (parsedate_to_datetime(value) - datetime.now().astimezone()).total_seconds()
            except (TypeError, ValueError):
                seconds = 0.5 * 2 ** attempt
        return min(max(seconds, 0.0), self.max_wait)

    def result(self, call: Call[T], response: httpx.Response) -> T:
        self.lsn.saw(response.headers.get(LSN_HEADER))
        if response.is_success:
            return call.read(response)
        try:
            body = response.json()
        except ValueError:
            body = {}
        detail = body.get("detail") if isinstance(body, dict) else None
        hint = body.get("hint") if isinstance(body, dict) else None
        message = f"{detail or response.reason_phrase} ({response.status_code} on {call.method} {call.path})"
        kind = errors.BY_STATUS.get(response.status_code)
        if kind is errors.InvalidInput:
            raise errors.InvalidInput(message, hint=hint, fields=body.get("fields") if isinstance(body, dict) else None)
        if kind is not None:
            raise kind(message, hint=hint)
        raise ServiceError(message, status=response.status_code, hint=hint)


class _Operations:
    """Every operation of the API, once. ``_send`` is the client's: it returns the answer (``MemVault``) or an
    awaitable of it (``AsyncMemVault``)."""

    _core: _Core

    def _send(self, call: Call[T]) -> T:
        raise NotImplementedError

    @property
    def lsn(self) -> str | None:
        """The highest WAL position this client's writes were answered with (``X-Memvault-LSN``; None before the
        first, or when the service has no standbys): sent back with each request."""
        value = self._core.lsn.value
        return None if value is None else format_lsn(value)

    # vaults
    def create_vault(self, name: str) -> VaultOut:
        return self._send(Call("POST", "/v1/vaults", _model(VaultOut), VaultCreate(name=name)))

    def vault(self, name: str) -> VaultOut:
        return self._send(Call("GET", f"/v1/vaults/{_seg(name)}", _model(VaultOut)))

    def vaults(self, *, limit: int | None = None, cursor: str | None = None) -> Page[VaultOut]:
        return self._send(Call("GET", "/v1/vaults", _model(Page[VaultOut]), params={"limit": limit, "cursor": cursor}))

    def delete_vault(self, name: str, *, purge: bool = False) -> None:
        return self._send(Call("DELETE", f"/v1/vaults/{_seg(name)}", _nothing, params={"purge": _flag(purge)}))

    # the write track
    def remember(self, vault: str, content: str, **fields: Any) -> ItemOut:
        """One memory (``MemoryIn``'s fields: category, source_kind, said_at, session_id, confidence, metadata);
        the answer says CREATE / MERGE / SUPERSEDE / SKIP / REJECT, the memory's id and why."""
        return self._send(Call("POST", f"/v1/vaults/{_seg(vault)}/memories",
                               lambda r: WriteOut.model_validate_json(r.content).results[0],
                               MemoryIn(content=content, **fields), idempotency_key=str(uuid.uuid4())))

    def append_turns(self, vault: str, session: str, turns: Iterable[TurnIn | dict[str, Any]]) -> TurnsOut:
        body = TurnsIn(turns=[t if isinstance(t, TurnIn) else TurnIn.model_validate(t) for t in turns])
        return self._send(Call("POST", f"/v1/vaults/{_seg(vault)}/sessions/{_seg(session)}/turns", _model(TurnsOut),
                               body, idempotency_key=str(uuid.uuid4())))

    def close_session(self, vault: str, session: str) -> CloseOut:
        """Extract the session's atomic units (its Facts, Decisions...) and summary now."""
        return self._send(Call("POST", f"/v1/vaults/{_seg(vault)}/sessions/{_seg(session)}/close",
                               _model(CloseOut)))

    def forget(self, vault: str, memory_id: int, *, purge: bool = False) -> None:
        """No longer recalled (its history stays); ``purge``: erased for good (an admin key)."""
        return self._send(Call("DELETE", f"/v1/vaults/{_seg(vault)}/memories/{int(memory_id)}", _nothing,
                               params={"purge": _flag(purge)}))

    def feedback(self, vault: str, memory_id: int, signal: Literal["+", "-"], *, note: str | None = None
                 ) -> FeedbackOut:
        return self._send(Call("POST", f"/v1/vaults/{_seg(vault)}/memories/{int(memory_id)}/feedback",
                               _model(FeedbackOut), FeedbackIn(signal=signal, note=note)))

    # the read track
    def recall(self, vault: str, query: str, **options: Any) -> RecallOut:
        """``RecallIn``'s options: format, token_budget, k, as_of, known_at, thinking, session_id, funnel."""
        return self._send(Call("POST", f"/v1/vaults/{_seg(vault)}/recall", _model(RecallOut),
                               RecallIn(query=query, **options)))

    # browsing
    def memory(self, vault: str, memory_id: int) -> MemoryOut:
        return self._send(Call("GET", f"/v1/vaults/{_seg(vault)}/memories/{int(memory_id)}", _model(MemoryOut)))

    def memories(self, vault: str, *, limit: int | None = None, cursor: str | None = None, **filters: Any
                 ) -> Page[MemoryItem]:
        """``filters``: category, kind, contains, state, valid_from... as ``GET .../memories`` takes them."""
        return self._send(Call("GET", f"/v1/vaults/{_seg(vault)}/memories", _model(Page[MemoryItem]),
                               params={"limit": limit, "cursor": cursor, **filters}))

    def sessions(self, vault: str, *, open: bool | None = None, limit: int | None = None,
                 cursor: str | None = None) -> Page[SessionItem]:
        return self._send(Call("GET", f"/v1/vaults/{_seg(vault)}/sessions", _model(Page[SessionItem]),
                               params={"open": _flag(open), "limit": limit, "cursor": cursor}))

    def turns(self, vault: str, session: str, *, limit: int | None = None, cursor: str | None = None
              ) -> Page[TurnItem]:
        return self._send(Call("GET", f"/v1/vaults/{_seg(vault)}/sessions/{_seg(session)}/turns",
                               _model(Page[TurnItem]), params={"limit": limit, "cursor": cursor}))

    def entities(self, vault: str, *, contains: str | None = None, limit: int | None = None,
                 cursor: str | None = None) -> Page[EntityItem]:
        return self._send(Call("GET", f"/v1/vaults/{_seg(vault)}/entities", _model(Page[EntityItem]),
                               params={"contains": contains, "limit": limit, "cursor": cursor}))

    def neighbourhood(self, vault: str, entity: str | int, *, hops: int = 1) -> Neighbourhood:
        """The knowledge graph around an entity (its name or id), ``hops`` relations away."""
        return self._send(Call("GET", f"/v1/vaults/{_seg(vault)}/entities/{_seg(entity)}/neighbourhood",
                               _model(Neighbourhood), params={"hops": hops}))

    def export(self, vault: str, *, embeddings: bool = False) -> list[dict[str, Any]]:
        """The vault as ``memvault export`` writes it: a header record, then sessions, turns, memories..."""
        return self._send(Call("GET", f"/v1/vaults/{_seg(vault)}/export", _lines,
                               params={"embeddings": _flag(embeddings)}))


def _flag(value: bool | None) -> str | None:
    return None if value is None else ("true" if value else "false")


def _key(key: str | None) -> str | None:
    if key is not None:
        return key
    from app.settings import get_settings

    setting = get_settings().api_key
    return setting.get_secret_value() if setting else None


class MemVault(_Operations):
    """The blocking client. ``key``: an API key (default ``MEMVAULT_API_KEY``); ``transport``: any httpx
    transport (tests pass the app's ASGI transport); ``retries``: resends after a 503, each after its
    ``Retry-After`` (at most ``max_wait`` seconds)."""

    def __init__(self, url: str = DEFAULT_URL, key: str | None = None, *, timeout: float = 30.0, retries: int = 3,
                 max_wait: float = 30.0, transport: httpx.BaseTransport | None = None) -> None:
        self._core = _Core(_key(key), retries, max_wait)
        self._http = httpx.Client(base_url=url, headers=self._core.headers(), timeout=timeout, transport=transport)

    def _send(self, call: Call[T]) -> T:
        import time

        for attempt in range(self._core.retries + 1):
            response = self._http.send(self._core.request(self._http, call))
            if (pause := self._core.wait(response, attempt)) is None:
                break
            time.sleep(pause)
        return self._core.result(call, response)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> MemVault:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncMemVault(_Operations):
    """The asyncio client: ``MemVault``'s methods, each returning an awaitable of the same answer."""

    def __init__(self, url: str = DEFAULT_URL, key: str | None = None, *, timeout: float = 30.0, retries: int = 3,
                 max_wait: float = 30.0, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self._core = _Core(_key(key), retries, max_wait)
        self._http = httpx.AsyncClient(base_url=url, headers=self._core.headers(), timeout=timeout,
                                       transport=transport)

    async def _send(self, call: Call[T]) -> T:  # type: ignore[override]
        import asyncio

        for attempt in range(self._core.retries + 1):
            response = await self._http.send(self._core.request(self._http, call))
            if (pause := self._core.wait(response, attempt)) is None:
                break
            await asyncio.sleep(pause)
        return self._core.result(call, response)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncMemVault:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
