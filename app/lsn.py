"""WAL positions as the API hands them out (``X-Memvault-LSN``): what a write's response carries and a read sends
back so that a hot standby serves it only once it has replayed that write (app/db/replicas.py). Standard library
only: the Python client and the Claude Code hook's thin entry (app/interfaces/hook_client.py) use it too."""

from __future__ import annotations

import re

from app.errors import InvalidInput

LSN_HEADER = "X-Memvault-LSN"
_LSN = re.compile(r"^([0-9A-Fa-f]{1,8})/([0-9A-Fa-f]{1,8})$")


def parse_lsn(text: str) -> int:
    """A PostgreSQL WAL position (``16/B374D848``) as a number; InvalidInput (a 400) if it is not one."""
    m = _LSN.match(text.strip())
    if m is None:
        raise InvalidInput(f"{LSN_HEADER}: {text[:40]!r} is not a WAL position",
                           hint="send back a write's X-Memvault-LSN header as it came (e.g. 0/3000148)")
    return (int(m.group(1), 16) << 32) | int(m.group(2), 16)


def format_lsn(value: int) -> str:
    return f"{value >> 32:X}/{value & 0xFFFFFFFF:X}"


class HighestLSN:
    """The highest WAL position one client has been handed by the service's writes (None before its first). A
    client sends it back on every request; the service reads it only on the routes a standby may serve."""

    def __init__(self) -> None:
        self.value: int | None = None

    def saw(self, header: str | None) -> None:
        """A response's ``X-Memvault-LSN`` (absent on reads, and when the service has no standbys)."""
        if not header:
            return
        try:
            lsn = parse_lsn(header)
        except InvalidInput:  # not ours to fail a request over: the next read is then served by the primary's rule
            return
        if self.value is None or lsn > self.value:
            self.value = lsn

    def headers(self) -> dict[str, str]:
        return {LSN_HEADER: format_lsn(self.value)} if self.value is not None else {}
