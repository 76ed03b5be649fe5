"""Files that hold a vault's or a database's contents (``memvault db dump -o F``, ``memvault export -o F``) are
created readable by their owner only (mode 0600), whatever the umask, and a file written over is narrowed to 0600
before a byte of it is written."""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO

MODE = 0o600


def open_private(path: Path, *, binary: bool = False) -> IO:
    """``path`` opened for writing (created or truncated) with mode 0600."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, MODE)
    try:
        os.fchmod(fd, MODE)  # an existing file keeps its mode through O_CREAT: narrow it
        return os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8")
    except BaseException:
        os.close(fd)
        raise
