"""Open-loop load: requests arrive on a schedule fixed in advance, whatever the service does.

A closed loop (N clients, each sending its next request when the last one returns) slows down with the service it
measures: when the service stalls, fewer requests are sent, and the requests that would have arrived meanwhile
and waited never appear in the numbers (coordinated omission). Users do not wait for each other. Here the arrival
times are drawn first (Poisson, or evenly spaced), each request is sent at its time whether or not the earlier
ones have returned, and its latency runs from its *scheduled* time, so a request that had to be sent late because
the load generator itself fell behind still counts its wait.

:func:`run_step` sends one step (a rate for a duration) through an :class:`Ops` (what a recall and a write are)
and returns a :class:`Step`: requests scheduled, sent, completed within the step and after it, latencies per
operation, errors by status, the acknowledged writes. :func:`saturated` and :func:`saturation_rps` say where the
completed rate stops following the offered one. Nothing here knows HTTP; app/bench/load.py drives a live service.
"""

from __future__ import annotations

import asyncio
import math
import random
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import numpy as np

OPS = ("recall", "write")


@dataclass(frozen=True, slots=True)
class Answer:
    """What one request came back with: ``status`` is ``"200"``-like for an HTTP answer, the exception's name for
    a transport failure; ``ok`` when it did what was asked; ``ack`` (writes) what the service acknowledged (an
    Idempotency-Key and the block id it answered)."""

    status: str
    ok: bool
    ack: tuple[str, int | None] | None = None


@dataclass(frozen=True, slots=True)
class Ops:
    recall: Callable[[random.Random], Awaitable[Answer]]
    write: Callable[[random.Random], Awaitable[Answer]]


@dataclass
class Step:
    rate: float  # offered requests/s
    duration_s: float
    poisson: bool
    scheduled: int = 0
    sent: int = 0
    completed: int = 0  # answered (any status), whenever
    completed_in_window: int = 0  # answered by the end of the step's window
    unfinished: int = 0  # not answered within the grace period after the window (counted as errors too)
    latencies: dict[str, list[float]] = field(default_factory=lambda: {op: [] for op in OPS})  # successes, s
    errors: dict[str, Counter] = field(default_factory=lambda: {op: Counter() for op in OPS})
    counts: Counter = field(default_factory=Counter)  # scheduled per operation
    send_lag: list[float] = field(default_factory=list)  # sent - scheduled, s: the generator's own delay
    acked: dict[str, int | None] = field(default_factory=dict)  # Idempotency-Key -> block id
    wall_s: float = 0.0  # the window and the wait for stragglers
    errors_in_window: int = 0  # failed answers among completed_in_window

    @property
    def offered_rps(self) -> float:
        return self.scheduled / self.duration_s if self.duration_s else 0.0

    @property
    def completed_rps(self) -> float:
        """Successful answers within the window, per second: what the service kept up with."""
        ok_in_window = self.completed_in_window - self.errors_in_window
        return max(0, ok_in_window) / self.duration_s if self.duration_s else 0.0

    def error_count(self) -> int:
        return sum(sum(c.values()) for c in self.errors.values())

    def summary(self) -> dict:
        return {
            "rate": self.rate, "arrivals": "poisson" if self.poisson else "fixed", "duration_s": self.duration_s,
            "scheduled": self.scheduled, "sent": self.sent, "completed": self.completed,
            "completed_in_window": self.completed_in_window, "unfinished": self.unfinished,
            "offered_rps": round(self.offered_rps, 2), "completed_rps": round(self.completed_rps, 2),
            "per_op": {op: {"scheduled": self.counts[op], **pct(self.latencies[op]),
                            "errors": dict(self.errors[op])} for op in OPS},
            "errors": self.error_count(), "writes_acknowledged": len(self.acked),
            "send_lag_ms": pct(self.send_lag), "wall_s": round(self.wall_s, 1)}


def pct(xs: list[float]) -> dict[str, float]:
    """n, p50, p95, p99 in milliseconds of ``xs`` (seconds); NaN when empty."""
    if not xs:
        return {"n": 0, "p50": math.nan, "p95": math.nan, "p99": math.nan}
    a = np.asarray(xs) * 1000
    return {"n": len(xs), "p50": round(float(np.percentile(a, 50)), 1), "p95": round(float(np.percentile(a, 95)), 1),
            "p99": round(float(np.percentile(a, 99)), 1)}


def arrivals(rate: float, duration_s: float, rng: random.Random, *, poisson: bool = True) -> list[float]:
    """Offsets (s from the step's start, below ``duration_s``) of the requests of one step at ``rate``/s:
    exponential gaps (a Poisson process), or evenly spaced."""
    if rate <= 0 or duration_s <= 0:
        return []
    if not poisson:
        return [i / rate for i in range(int(math.ceil(rate * duration_s - 1e-9)))]
    out, t = [], rng.expovariate(rate)
    while t < duration_s:
        out.append(t)
        t += rng.expovariate(rate)
    return out


async def run_step(ops: Ops, rate: float, duration_s: float, *, write_share: float, seed: int,
                   poisson: bool = True, grace_s: float = 60.0) -> Step:
    """Send one step: each request at its scheduled time (never waiting for earlier ones), then wait up to
    ``grace_s`` for those still out. A request unanswered by then is cancelled and counted as an error
    (``unfinished``)."""
    rng = random.Random(seed)
    plan = [(t, "write" if rng.random() < write_share else "recall") for t in arrivals(rate, duration_s, rng,
                                                                                       poisson=poisson)]
    step = Step(rate=rate, duration_s=duration_s, poisson=poisson, scheduled=len(plan))
    step.counts.update(op for _, op in plan)
    loop = asyncio.get_running_loop()
    start = loop.time() + 0.02
    end = start + duration_s
    tasks: list[asyncio.Task] = []

    async def one(op: str, at: float, op_rng: random.Random) -> None:
        step.sent += 1
        step.send_lag.append(loop.time() - at)
        try:
            answer = await (ops.write if op == "write" else ops.recall)(op_rng)
        except Exception as exc:  # noqa: BLE001 - a failed request is a result of the run, not its end
            answer = Answer(type(exc).__name__, False)
        done = loop.time()
        step.completed += 1
        in_window = done <= end
        step.completed_in_window += in_window
        if answer.ok:
            step.latencies[op].append(done - at)  # from the scheduled time: the wait to be sent counts
            if answer.ack is not None:
                step.acked[answer.ack[0]] = answer.ack[1]
        else:
            step.errors[op][answer.status] += 1
            step.errors_in_window += in_window

    for n, (offset, op) in enumerate(plan):
        delay = start + offset - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(one(op, start + offset, random.Random(seed * 1_000_003 + n))))
    if (left := end - loop.time()) > 0:
        await asyncio.sleep(left)
    if tasks:
        _, pending = await asyncio.wait(tasks, timeout=grace_s)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        step.unfinished = len(pending)
        for (_, op), task in zip(plan, tasks):
            if task in pending:
                step.errors[op]["unfinished"] += 1
    step.wall_s = loop.time() - start
    return step


def saturated(step: Step, idle_p95_ms: float, *, keep_up: float = 0.9, explode: float = 10.0,
              max_error_rate: float = 0.01) -> str | None:
    """Why this step is past saturation, or None: the completed rate fell below ``keep_up`` x the offered one, the
    recall p95 grew past ``explode`` x the idle p95, or more than ``max_error_rate`` of the requests failed."""
    if step.scheduled and step.completed_rps < keep_up * step.offered_rps:
        return f"completed {step.completed_rps:.1f}/s of {step.offered_rps:.1f}/s offered"
    p95 = pct(step.latencies["recall"])["p95"]
    if idle_p95_ms == idle_p95_ms and p95 == p95 and p95 > explode * idle_p95_ms:
        return f"recall p95 {p95:.0f} ms > {explode:g}x idle ({idle_p95_ms:.0f} ms)"
    if step.scheduled and step.error_count() > max_error_rate * step.scheduled:
        return f"{step.error_count()} errors in {step.scheduled} requests"
    return None


def saturation_rps(steps: list[Step]) -> float:
    """The saturation throughput: the most successful answers per second any step got within its window (a step
    past saturation completes about what the service can do; one below it completes what was offered)."""
    return max((s.completed_rps for s in steps), default=0.0)
