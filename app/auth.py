"""Who is calling, and what they may do: API keys checked against the database, scopes, vault binding.

A key reads ``mvk_<id>_<secret>``. The id is public (it names the key in lists, audit rows and revocation); only an
argon2id hash of the secret is stored. Every check looks the key up by id, so a revocation takes effect on the next
request; argon2 is paid once per key and presented secret: a SHA-256 digest of each secret already verified for a
key is kept by the process's composition root (``Services.verified_secrets``, a small LRU), and a later request with
the same secret only compares digests. Revoking a key through the API empties its entries there; a revocation made
elsewhere (the CLI, another API process) is seen anyway, because every check reads the key's row.

Scopes: ``read`` < ``write`` < ``admin``, each implying the ones before it. A key is bound to one vault or to all.
Every interface calls the same two things: ``authenticate(db, presented) -> Principal`` and
``principal.require(vault_name, scope)`` (REST guard in ``app.api.guard``, MCP, hooks).
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import secrets
from collections import OrderedDict
from dataclasses import dataclass
from functools import cache
from datetime import UTC, datetime, timedelta
from threading import Lock
from typing import Literal, get_args
from uuid import UUID

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from app.auth_limit import FailedAuthLimiter, claimed_key_id
from app.db.connector import Database
from app.db.queries import Q
from app.errors import Forbidden, Unauthorized

Scope = Literal["read", "write", "admin"]
SCOPES: tuple[Scope, ...] = get_args(Scope)
_RANK = {s: i for i, s in enumerate(SCOPES)}

KEY_PREFIX = "mvk"
_KEY = re.compile(r"^mvk_([a-z0-9]{6,32})_([A-Za-z0-9_-]{20,200})$")
HOW_TO_GET_ONE = "create one with `memvault key create --scope admin` (or POST /v1/keys with an admin key)"

# argon2id, OWASP's minimum profile (19 MiB, 2 passes, 1 lane): the secret is 256 random bits, so the hash only has
# to make a stolen table useless, not to stretch a guessable password; a verification costs ~20 ms, not ~60.
HASHER = PasswordHasher(time_cost=2, memory_cost=19 * 1024, parallelism=1)
TOUCH_EVERY = timedelta(minutes=1)  # last_used_at granularity


def scope_allows(have: str, need: str) -> bool:
    return _RANK[have] >= _RANK[need]


@dataclass(frozen=True, slots=True)
class Principal:
    """A verified key: its id, scope and the vault it is bound to (None: every vault)."""

    key_id: str
    scope: Scope
    vault_id: UUID | None
    vault_name: str | None

    @property
    def actor(self) -> str:
        return f"key:{self.key_id}"

    @property
    def all_vaults(self) -> bool:
        return self.vault_id is None

    def may_see(self, vault_name: str) -> bool:
        return self.all_vaults or vault_name == self.vault_name

    def require(self, vault_name: str | None, scope: str) -> None:
        """Raise Forbidden unless this key may act with ``scope`` on ``vault_name`` (None: across vaults, which
        takes a key for every vault)."""
        if not scope_allows(self.scope, scope):
            raise Forbidden(f"API key {self.key_id} has scope {self.scope!r}; this needs {scope!r}",
                            hint=f"use a key with scope {scope} or higher (`memvault key create --scope {scope}`)")
        if vault_name is None:
            if not self.all_vaults:
                raise Forbidden(f"API key {self.key_id} is bound to vault {self.vault_name!r}; this acts across "
                                "vaults", hint="use a key created without --vault")
        elif not self.may_see(vault_name):
            raise Forbidden(f"API key {self.key_id} is bound to vault {self.vault_name!r}, not {vault_name!r}",
                            hint=f"use a key for vault {vault_name!r} or for every vault")


class VerifiedSecrets:
    """Digests of secrets already verified with argon2, per key id and stored hash (bounded LRU, thread-safe).
    One per :class:`app.services.Services`; :func:`authenticate` without one verifies with argon2 every time."""

    def __init__(self, size: int = 1024) -> None:
        self._seen: OrderedDict[tuple[str, str, bytes], None] = OrderedDict()
        self._size = size
        self._lock = Lock()

    def __contains__(self, entry: tuple[str, str, bytes]) -> bool:
        with self._lock:
            if entry in self._seen:
                self._seen.move_to_end(entry)
                return True
            return False

    def add(self, entry: tuple[str, str, bytes]) -> None:
        with self._lock:
            self._seen[entry] = None
            while len(self._seen) > self._size:
                self._seen.popitem(last=False)

    def forget(self, key_id: str) -> None:
        """Drop every entry of ``key_id`` (its key was revoked)."""
        with self._lock:
            for entry in [e for e in self._seen if e[0] == key_id]:
                del self._seen[entry]

    def knows(self, key_id: str) -> bool:
        """Whether any verified secret of ``key_id`` is kept."""
        with self._lock:
            return any(e[0] == key_id for e in self._seen)

    def clear(self) -> None:
        with self._lock:
            self._seen.clear()


def new_key() -> tuple[str, str, str]:
    """(key id, the whole key to hand out once, its argon2 hash)."""
    key_id = secrets.token_hex(6)
    secret = secrets.token_urlsafe(32)
    return key_id, f"{KEY_PREFIX}_{key_id}_{secret}", HASHER.hash(secret)


def invalid_key() -> Unauthorized:
    """The one answer to every key that fails (malformed, unknown, wrong secret, revoked, an unsupported scheme):
    it names neither the key nor the reason, so it tells a caller nothing about which key ids exist. The reason
    stays in the server's view of the key (``memvault key list``)."""
    return Unauthorized("the API key is not valid",
                        hint="send the whole key as printed when it was created ('Authorization: Bearer <key>'); "
                             + HOW_TO_GET_ONE)


def parse_key(presented: str) -> tuple[str, str]:
    match = _KEY.match(presented.strip())
    if match is None:
        raise invalid_key()
    return match.group(1), match.group(2)


@cache
def _decoy_hash() -> str:
    """A hash no secret matches, verified for an unknown or revoked key so that every failure costs one argon2
    verification (no timing difference between a key id that exists and one that does not)."""
    return HASHER.hash(secrets.token_urlsafe(32))


def _verify(key_hash: str, secret: str) -> bool:
    try:
        return HASHER.verify(key_hash, secret)
    except (VerificationError, InvalidHashError):
        return False


async def authenticate(db: Database, presented: str | None, verified: VerifiedSecrets | None = None) -> Principal:
    """The principal of a presented key; Unauthorized when there is none, or :func:`invalid_key` when it is
    malformed, unknown, wrong or revoked. One indexed lookup per call; argon2 only for a secret not in
    ``verified`` (the services' cache; None: every time), and for every failure."""
    if not presented or not presented.strip():
        raise Unauthorized("an API key is required",
                           hint="send 'Authorization: Bearer <key>' (or 'X-API-Key: <key>'); " + HOW_TO_GET_ONE)
    key_id, secret = parse_key(presented)
    row = await db.fetchone(Q.api_key_lookup, (key_id,))
    if row is None or row["revoked_at"] is not None:
        await asyncio.to_thread(_verify, _decoy_hash(), secret)
        raise invalid_key()
    entry = (key_id, row["key_hash"], hashlib.sha256(secret.encode()).digest())
    if verified is None or entry not in verified:
        if not await asyncio.to_thread(_verify, row["key_hash"], secret):
            raise invalid_key()
        if verified is not None:
            verified.add(entry)
    if row["last_used_at"] is None or datetime.now(UTC) - row["last_used_at"] > TOUCH_EVERY:
        await db.fetchone(Q.api_key_touch, (key_id,))
    return Principal(key_id=key_id, scope=row["scope"], vault_id=row["vault_id"], vault_name=row["vault_name"])


async def authenticate_limited(db: Database, limiter: FailedAuthLimiter, presented: str | None,
                               address: str | None, verified: VerifiedSecrets | None = None) -> Principal:
    """:func:`authenticate` behind the failed-attempt limit (``app.auth_limit``): 429 once the client's address or
    the claimed key id has failed too often; each failure of a presented key is counted (a request with no key at
    all guesses nothing and is not), and a success makes the address known for the key (never locked out by
    others' failures at its id)."""
    key_id = claimed_key_id(presented)
    limiter.check(key_id, address)
    try:
        principal = await authenticate(db, presented, verified)
    except Unauthorized:
        if presented and presented.strip():
            limiter.failed(key_id, address)
        raise
    limiter.succeeded(principal.key_id, address)
    return principal
