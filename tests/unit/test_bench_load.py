"""`memvault bench load`'s CPU accounting: /proc readings and the arithmetic of the load section."""

from __future__ import annotations

import math
import os
import subprocess
import sys

from app.bench.load import _cpu, cpu_s, process_tree


def test_cpu_seconds_and_the_process_tree_follow_children() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; sum(range(3_000_000)); time.sleep(5)"])
    try:
        tree = process_tree(os.getpid())
        assert os.getpid() in tree and child.pid in tree
        assert cpu_s([os.getpid()]) > 0
        assert cpu_s([2**22 + 12345]) == 0  # a pid that is not there counts nothing
    finally:
        child.kill()
        child.wait()


def test_cpu_per_request_and_the_latency_floor() -> None:
    idle = {"server_s": 0.5, "db_s": 1.5, "client_s": 0.1, "wall_s": 4.0, "machine_busy": 0.5}  # 100 recalls
    load = {"server_s": 12.0, "db_s": 18.0, "client_s": 2.0, "wall_s": 30.0, "machine_busy": 1.0}  # 1000 requests
    r = {"idle_recall": {"n": 100, "p95": 150.0}, "requests": 1000, "write_share": 0.2, "clients": 32,
         "throughput_rps": 32.0, "recall": {"p95": 1500.0}}  # a mean wait of 1 s, p95 1.5x it
    c = _cpu(idle, load, r)
    assert c["recall_ms"] == 20.0 and c["mix_ms"] == 30.0 and c["client_ms"] == 2.0
    cores = os.cpu_count() or 1
    assert math.isclose(c["max_rps"], round(1000 * cores / 32.0, 1))
    assert c["mean_latency_floor_ms"] == round(32 * 32.0 / cores)  # Little's law at full use of every core
    assert c["goal_p95_ms"] == 450 and c["p95_over_mean"] == 1.5
    assert math.isclose(c["goal_rps"], round(32 / 0.3, 1))  # p95 450 ms is a mean of 300 ms at that shape
    assert math.isclose(c["goal_cpu_ms"], round(1000 * cores / (32 / 0.3), 1), rel_tol=1e-3)
