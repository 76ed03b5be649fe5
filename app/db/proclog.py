"""Helpers for provisioning: subprocesses logged to a file, and an exclusive file lock.

Every command that provisioning runs (debootstrap, apt-get, initdb, pg_ctl) writes its output to one log file
under the data directory; a failure becomes a :class:`ProvisionError` that names the log and quotes its
last lines.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shlex
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

from app.errors import ProvisionError

Progress = Callable[[str], None]


def quiet(_: str) -> None:
    """The default progress callback: say nothing."""


class CommandLog:
    """Runs commands with their output appended to ``path``."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def note(self, text: str) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} {text}\n")

    def run(
        self,
        argv: Sequence[str],
        *,
        what: str,
        hint: str,
        env: Mapping[str, str] | None = None,
        timeout: float = 900,
        user: int | None = None,
        group: int | None = None,
        new_session: bool = False,
    ) -> None:
        """Run ``argv``; on failure raise ProvisionError("<what> failed ...", hint) with the log's tail."""
        self.note("$ " + shlex.join(str(a) for a in argv))
        with self.path.open("ab") as out:
            try:
                proc = subprocess.run(
                    [str(a) for a in argv],
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    env=dict(env) if env is not None else None,
                    timeout=timeout,
                    user=user,
                    group=group,
                    extra_groups=[] if user is not None else None,
                    start_new_session=new_session,
                    check=False,
                )
            except FileNotFoundError as exc:
                raise ProvisionError(f"{what} failed: {exc.filename} is not installed", hint=hint) from exc
            except subprocess.TimeoutExpired as exc:
                raise self.failure(f"{what} did not finish within {timeout:.0f} s", hint) from exc
        if proc.returncode != 0:
            raise self.failure(f"{what} failed (exit {proc.returncode})", hint)

    def failure(self, message: str, hint: str) -> ProvisionError:
        return ProvisionError(f"{message}. Last lines of {self.path}:\n{self.tail()}", hint=hint)

    def tail(self, lines: int = 12) -> str:
        try:
            text = self.path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "    (no log)"
        return "\n".join("    " + line for line in text.rstrip().splitlines()[-lines:])


@contextlib.contextmanager
def file_lock(path: Path, progress: Progress = quiet) -> Iterator[None]:
    """Hold an exclusive ``fcntl`` lock on ``path``; say so if another process has it first."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            progress(f"waiting for another memvault process that holds {path} ...")
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock
