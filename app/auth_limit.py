"""Failed API keys, rate-limited, and the client address they are counted by.

Three sliding windows of ``window_s``, each answering 429 + ``Retry-After`` until its oldest failure leaves it:

- ``per_address`` failures from one client address (any key ids): bounds what one client can try, and the argon2
  work it can make the server do;
- ``per_key`` failures at one key id *from one address*: one guesser aiming at one key is slowed as before;
- ``per_key_all`` failures at one key id from all addresses together: a ceiling for guessing spread over many
  addresses.

A blocked window refuses a correct key too (otherwise the 429 itself would tell a guesser which secret was right).

**Why the key id's windows do not lock its owner out.** A key id is not secret: it is printed in lists, audit rows
and logs. If failures were counted per key id alone (as before), anyone who knows one could send ten wrong
secrets a minute and keep the key's real owner refused for as long as they liked, at no cost. Two changes, each
with a reason:

1. Failures at a key id are counted per (key id, address), so a guesser at one address exhausts only its own
   window; the owner elsewhere is not touched. The global per-key-id window stays only as a ceiling ten times
   higher, for guessing spread over many addresses.
2. An address that has presented the right secret for a key id within ``known_for_s`` (a day by default) is
   exempt from both of that key id's windows: even an attacker with many addresses cannot lock out a client that
   is already using the key. It stays subject to its address window, so an attacker behind the same NAT as the
   owner gains at most ``per_address`` guesses a window, against a 256-bit secret.

Whether a request is refused never depends on the secret it presents, only on the history of its key id and
address, so the 429 is no oracle. What remains possible: an attacker spread over more than ``per_key_all /
per_key`` addresses can keep a key id refused to addresses that have not used it in the last day (a new machine of
the owner's); that is the price of any per-key ceiling, and lowering it is what the ceiling is for.

The client address is the TCP peer, unless the peer is a trusted proxy (``MEMVAULT_TRUSTED_PROXIES``): then it
is the right-most X-Forwarded-For address that is not itself a trusted proxy (:class:`ClientAddress`).
X-Forwarded-For from any other peer is ignored: a client can write anything in it.

One limiter per process, owned by the composition root (``Services.auth_attempts``); with ``serve --workers N``
each API process counts its own. Bounded: at most ``max_tracked`` windows and known addresses (the least recently
used forgotten first). Not thread-safe by design: it is used from one event loop, without awaiting.
"""

from __future__ import annotations

import ipaddress
import math
import re
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable

from app.errors import TooManyRequests

_KEY_ID = re.compile(r"^\s*mvk_([a-z0-9]{6,32})_")


def claimed_key_id(presented: str | None) -> str | None:
    """The key id a presented key names (whether or not it exists), None when it names none."""
    match = _KEY_ID.match(presented or "")
    return match.group(1) if match else None


class FailedAuthLimiter:
    def __init__(self, *, per_key: int, per_address: int, window_s: float, per_key_all: int | None = None,
                 known_for_s: float = 86_400.0, max_tracked: int = 10_000,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._limits = {"key": per_key, "key_all": per_key_all or 10 * per_key, "address": per_address}
        self._window = window_s
        self._known_for = known_for_s
        self._max_tracked = max_tracked
        self._clock = clock
        self._failures: OrderedDict[tuple, deque[float]] = OrderedDict()
        self._known: OrderedDict[tuple[str, str | None], float] = OrderedDict()  # (key id, address) -> last success

    def _windows(self, key_id: str | None, address: str | None, *, exempt: bool) -> list[tuple[str, tuple]]:
        out: list[tuple[str, tuple]] = [] if address is None else [("address", ("address", address))]
        if key_id is not None and not exempt:
            out += [("key", ("key", key_id, address)), ("key_all", ("key_all", key_id))]
        return out

    def check(self, key_id: str | None, address: str | None) -> None:
        """TooManyRequests when the address, or (unless the address is known for it) the key id from this address
        or from everywhere, has used up its failures in the window."""
        now = self._clock()
        for kind, entry in self._windows(key_id, address, exempt=self.known(key_id, address)):
            times = self._recent(entry, now)
            if times is not None and len(times) >= self._limits[kind]:
                retry = math.ceil(times[0] + self._window - now)
                raise TooManyRequests(f"too many failed API keys from this {'client' if kind == 'address' else 'key'}",
                                      retry_after=retry, hint=f"retry in {max(1, retry)} s with a valid key")

    def failed(self, key_id: str | None, address: str | None) -> None:
        now = self._clock()
        for _, entry in self._windows(key_id, address, exempt=False):
            times = self._recent(entry, now)
            if times is None:
                times = self._failures[entry] = deque()
            times.append(now)
            self._failures.move_to_end(entry)
        while len(self._failures) > self._max_tracked:
            self._failures.popitem(last=False)

    def succeeded(self, key_id: str, address: str | None) -> None:
        """``address`` presented the right secret for ``key_id``: exempt from the key id's windows for a while."""
        self._known[(key_id, address)] = self._clock()
        self._known.move_to_end((key_id, address))
        while len(self._known) > self._max_tracked:
            self._known.popitem(last=False)

    def known(self, key_id: str | None, address: str | None) -> bool:
        if key_id is None:
            return False
        at = self._known.get((key_id, address))
        if at is None:
            return False
        if self._clock() - at > self._known_for:
            del self._known[(key_id, address)]
            return False
        return True

    def _recent(self, entry: tuple, now: float) -> deque[float] | None:
        times = self._failures.get(entry)
        if times is None:
            return None
        while times and times[0] <= now - self._window:
            times.popleft()
        if not times:
            del self._failures[entry]
            return None
        return times


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """An address as X-Forwarded-For or a peer gives it (``1.2.3.4``, ``1.2.3.4:80``, ``[::1]:80``, ``::1``);
    an IPv4-mapped IPv6 address as its IPv4; None when it is not an address."""
    text = text.strip()
    if text.startswith("["):
        text = text[1:].split("]", 1)[0]
    elif text.count(":") == 1:
        text = text.split(":", 1)[0]
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        return None
    return ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped else ip


def forwarded_for(scope: dict) -> list[str]:
    """The X-Forwarded-For headers of an ASGI request, in the order received."""
    return [v.decode("latin-1") for k, v in scope.get("headers") or () if k.lower() == b"x-forwarded-for"]


def uvicorn_proxy_options(trusted: list[str]) -> dict:
    """uvicorn's own X-Forwarded-For/-Proto handling, held to the same trusted proxies: by default uvicorn trusts
    127.0.0.1, so any local client could name its address; with none trusted, it reads neither header. Behind a
    trusted proxy it rewrites the peer as :class:`ClientAddress` would (right-most untrusted) and takes the scheme
    (the inspector's cookie is Secure behind a TLS proxy); :class:`ClientAddress` then sees an untrusted peer and
    keeps it, and does the same work for an app served by anything else."""
    return {"proxy_headers": bool(trusted), "forwarded_allow_ips": list(trusted) or None}


class ClientAddress:
    """The client address of a request, from its TCP peer and X-Forwarded-For (``trusted``: the proxies' addresses
    or CIDR blocks, ``MEMVAULT_TRUSTED_PROXIES``).

    Only a trusted peer's header is read. It is walked from the right (each proxy appends the address it received
    the request from): trusted proxies are skipped, the first address that is not one is the client. Anything to
    its left was written by the client and is ignored. If every address is a trusted proxy, the left-most is the
    client; an entry that is not an address stops the walk at the last trusted hop (a proxy never writes one)."""

    def __init__(self, trusted: Iterable[str] = ()) -> None:
        self._trusted = [ipaddress.ip_network(t, strict=False) for t in trusted]

    def trusted(self, ip: ipaddress.IPv4Address | ipaddress.IPv6Address | None) -> bool:
        return ip is not None and any(ip.version == net.version and ip in net for net in self._trusted)

    def __call__(self, peer: str | None, forwarded: Iterable[str] = ()) -> str | None:
        if peer is None or not self._trusted:
            return peer
        hop = _ip(peer)
        if not self.trusted(hop):
            return peer
        chain = [part for header in forwarded for part in header.split(",") if part.strip()]
        for part in reversed(chain):
            ip = _ip(part)
            if ip is None:
                break
            hop = ip
            if not self.trusted(ip):
                return str(ip)
        return str(hop)
