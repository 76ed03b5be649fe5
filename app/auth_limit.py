"""Failed API keys, rate-limited: after ``auth_failures_per_key`` failures at one claimed key id, or
``auth_failures_per_address`` from one client address, within ``auth_failure_window_s``, every further attempt
from there is refused with 429 and ``Retry-After`` until the oldest failure leaves the window (a correct key too:
otherwise the 429 itself would tell a guesser which secret was right).

One instance per process, owned by the composition root (``Services.auth_attempts``); with ``serve --workers N``
each API process counts its own. Bounded: at most ``max_tracked`` keys and addresses are remembered (the least
recently failed forgotten first). Not thread-safe by design: it is used from one event loop, without awaiting.
"""

from __future__ import annotations

import math
import re
import time
from collections import OrderedDict, deque
from collections.abc import Callable

from app.errors import TooManyRequests

_KEY_ID = re.compile(r"^\s*mvk_([a-z0-9]{6,32})_")


def claimed_key_id(presented: str | None) -> str | None:
    """The key id a presented key names (whether or not it exists), None when it names none."""
    match = _KEY_ID.match(presented or "")
    return match.group(1) if match else None


class FailedAuthLimiter:
    def __init__(self, *, per_key: int, per_address: int, window_s: float, max_tracked: int = 10_000,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._limits = {"key": per_key, "address": per_address}
        self._window = window_s
        self._max_tracked = max_tracked
        self._clock = clock
        self._failures: OrderedDict[tuple[str, str], deque[float]] = OrderedDict()

    def check(self, key_id: str | None, address: str | None) -> None:
        """TooManyRequests when the key id or the address has used up its failures in the window."""
        now = self._clock()
        for kind, value in (("key", key_id), ("address", address)):
            if value is None:
                continue
            times = self._recent((kind, value), now)
            if times is not None and len(times) >= self._limits[kind]:
                retry = math.ceil(times[0] + self._window - now)
                raise TooManyRequests(f"too many failed API keys from this {'client' if kind == 'address' else 'key'}",
                                      retry_after=retry, hint=f"retry in {max(1, retry)} s with a valid key")

    def failed(self, key_id: str | None, address: str | None) -> None:
        now = self._clock()
        for kind, value in (("key", key_id), ("address", address)):
            if value is None:
                continue
            times = self._recent((kind, value), now)
            if times is None:
                times = self._failures[(kind, value)] = deque()
            times.append(now)
            self._failures.move_to_end((kind, value))
        while len(self._failures) > self._max_tracked:
            self._failures.popitem(last=False)

    def _recent(self, entry: tuple[str, str], now: float) -> deque[float] | None:
        times = self._failures.get(entry)
        if times is None:
            return None
        while times and times[0] <= now - self._window:
            times.popleft()
        if not times:
            del self._failures[entry]
            return None
        return times
