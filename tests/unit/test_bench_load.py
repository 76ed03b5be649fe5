"""`memvault bench load`: the open-loop scheduler's accounting (no timing assertions), the saturation rule, the
/proc readings and the command's options."""

from __future__ import annotations

import asyncio
import os
import random
import subprocess
import sys

from app.bench.load_live import cpu_s, process_tree
from app.bench.openloop import Answer, Ops, Step, arrivals, run_step, saturated, saturation_rps


def test_arrivals_are_poisson_or_evenly_spaced_within_the_step() -> None:
    fixed = arrivals(4, 2.5, random.Random(1), poisson=False)
    assert fixed == [0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.25]
    poisson = arrivals(50, 20, random.Random(1))
    assert all(0 <= a < b < 20 for a, b in zip(poisson, poisson[1:]))
    assert 800 < len(poisson) < 1200  # 1000 expected; a Poisson count this far off has probability ~1e-10
    assert arrivals(0, 10, random.Random(1)) == [] and arrivals(5, 0, random.Random(1)) == []


def test_requests_are_sent_on_schedule_without_waiting_for_earlier_ones() -> None:
    """A service that never answers within the step: a closed loop would send one request per client; the open loop
    sends every scheduled request anyway, and what was not answered within the grace period is an error."""
    out = {"n": 0}

    async def stuck(rng: random.Random) -> Answer:
        out["n"] += 1
        await asyncio.sleep(3600)
        return Answer("200", True)

    step = asyncio.run(run_step(Ops(recall=stuck, write=stuck), 40, 0.5, write_share=0.5, seed=3, poisson=False,
                                grace_s=0.1))
    assert step.scheduled == step.sent == out["n"] == 20
    assert step.completed == 0 and step.unfinished == 20 and step.error_count() == 20
    assert sum(step.errors[op]["unfinished"] for op in ("recall", "write")) == 20
    assert step.completed_rps == 0 and saturated(step, 10.0) is not None


def test_the_accounting_of_answers_errors_and_acknowledged_writes() -> None:
    calls = {"recall": 0, "write": 0}

    async def recall(rng: random.Random) -> Answer:
        calls["recall"] += 1
        refused = calls["recall"] % 5 == 0
        await asyncio.sleep(0)
        return Answer("503", False) if refused else Answer("200", True)

    async def write(rng: random.Random) -> Answer:
        calls["write"] += 1
        if calls["write"] == 2:
            raise ConnectionResetError("gone")  # an exception from an operation is an answer too
        return Answer("200", True, (f"k{calls['write']}", calls["write"]))

    step = asyncio.run(run_step(Ops(recall=recall, write=write), 100, 0.4, write_share=0.3, seed=5, grace_s=30))
    assert step.scheduled == step.sent == step.completed == sum(calls.values())
    assert step.counts["recall"] == calls["recall"] and step.counts["write"] == calls["write"]
    assert step.errors["recall"]["503"] == calls["recall"] // 5
    assert step.errors["write"]["ConnectionResetError"] == 1
    assert len(step.acked) == calls["write"] - 1 == len(step.latencies["write"])
    assert len(step.latencies["recall"]) == calls["recall"] - calls["recall"] // 5
    assert all(lat >= 0 for lat in step.latencies["recall"] + step.send_lag)
    s = step.summary()
    assert s["per_op"]["recall"]["errors"] == {"503": calls["recall"] // 5} and s["errors"] == step.error_count()


def test_saturation_is_where_completed_stops_following_offered_or_p95_explodes() -> None:
    def step(offered: int, ok: int, p95_s: float = 0.01, errors: int = 0) -> Step:
        s = Step(rate=offered / 10, duration_s=10, poisson=True, scheduled=offered, completed_in_window=ok + errors,
                 errors_in_window=errors)
        s.latencies["recall"] = [p95_s] * 20
        s.errors["recall"]["503"] = errors
        return s

    assert saturated(step(100, 100), 20.0) is None
    assert "completed" in saturated(step(100, 80), 20.0)
    assert "p95" in saturated(step(100, 100, p95_s=0.5), 20.0)  # 500 ms > 10 x 20 ms
    assert "errors" in saturated(step(100, 95, errors=5), 20.0)
    assert saturation_rps([step(100, 100), step(150, 150), step(225, 170)]) == 17.0


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


def test_the_command_takes_a_rate_or_searches_for_saturation() -> None:
    import argparse

    from app.bench import load

    parser = argparse.ArgumentParser()
    load.add_parser(parser.add_subparsers())
    text = parser._subparsers._group_actions[0].choices["load"].format_help()
    for option in ("--rate", "--find-saturation", "--duration", "--step-duration", "--json", "--write-share"):
        assert option in text
    args = parser.parse_args(["load", "--rate", "12"])
    assert args.rate == 12 and not args.find_saturation
    try:
        parser.parse_args(["load", "--rate", "12", "--find-saturation"])
    except SystemExit:
        pass
    else:
        raise AssertionError("--rate and --find-saturation together were accepted")
