"""The bulk path's screening process outlives no parent: a `kill -TERM` of the importing process (whose default
action skips Python's exit handlers, so nothing closes the pool) leaves no child screening for nobody
(app/write/screen_process.py, ``_watch_parent``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from tests.integration.test_bulk_screen_process import alive

PARENT = """
import os, sys, time
from app.settings import Settings
from app.write.screen_process import ScreenProcess

child = ScreenProcess(Settings())
# the child's pid, asked through its pool: answered once the initializer has loaded the embedder and the gates
print(child._pool.submit(os.getpid).result(timeout=120), flush=True)
time.sleep(600)
"""


def test_the_screening_child_exits_when_its_parent_is_killed() -> None:
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True,
                              cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    try:
        child = int(parent.stdout.readline())
        assert alive(child)
        parent.send_signal(signal.SIGTERM)
        assert parent.wait(timeout=60) == -signal.SIGTERM  # killed: no exit handler closed the pool
        deadline = time.monotonic() + 60  # a liveness bound, not a speed target: the child polls once a second
        while alive(child) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not alive(child), f"the screening process {child} outlived its parent"
    finally:
        if parent.poll() is None:
            parent.kill()
        parent.wait()


def test_the_watch_ends_a_process_whose_parent_changed() -> None:
    """The check itself, in a child of this test: told a parent pid that is not its own, it exits at once."""
    code = "import os; from app.write.screen_process import _watch_parent; _watch_parent(os.getppid() + 1, 0.01); print('not reached')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    assert out.returncode == 0 and "not reached" not in out.stdout
