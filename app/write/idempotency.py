"""``Idempotency-Key``: a retried request writes once and gets the first answer again.

The stored answer is written in the same transaction as the write it describes, so either both exist or
neither does. The same key with a different request body is refused.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable
from typing import Any

from app.db.queries import Q
from app.errors import Conflict, InvalidInput
from app.services import Services
from app.vaults import Vault


class Raced(Conflict):
    """Another request with the same key stored its answer first (it held the vault's write lock): the caller
    answers with that one (:func:`replay`)."""


def request_hash(method: str, path: str, body: Any) -> bytes:
    return hashlib.sha256(json.dumps([method, path, body], sort_keys=True, default=str).encode()).digest()


async def replay(services: Services, vault: Vault, key: str | None, digest: bytes) -> dict | None:
    """The stored answer for ``key``, if this exact request was already done."""
    if key is None:
        return None
    if not 1 <= len(key) <= 200:
        raise InvalidInput("Idempotency-Key must be 1-200 characters")
    row = await services.db.fetchone(
        Q.idempotency_get,
        (vault.id, key), vault_id=vault.id)
    if row is None:
        return None
    if bytes(row["request_hash"]) != digest:
        raise Conflict(f"Idempotency-Key {key!r} was used for a different request",
                       hint="use a new key for a new request")
    return row["response"]


def recorder(vault: Vault, key: str | None, digest: bytes,
             build: Callable[[Any], dict]) -> Callable[[Any, Any], Awaitable[None]] | None:
    """A write-track hook that stores the response inside the write's transaction."""
    if key is None:
        return None

    async def hook(conn, results) -> None:
        cur = await conn.execute(
            Q.idempotency_put,
            (vault.id, key, digest, json.dumps(build(results), default=str)))
        if await cur.fetchone() is None:
            raise Raced(f"a request with Idempotency-Key {key!r} is already being processed",
                        hint="retry in a moment to get its answer")

    return hook
