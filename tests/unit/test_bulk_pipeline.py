"""The bulk path's pipeline (app/write/bulk.py ``_pipelined``): batches are written in order, each after its own
screen, while at most ``ahead`` later batches are being screened; a failed write cancels the screens in flight."""

from __future__ import annotations

import asyncio

import pytest

from app.write.bulk import _pipelined


class _Trace:
    def __init__(self) -> None:
        self.events: list[tuple[str, int]] = []
        self.screening = 0
        self.most = 0
        self.cancelled: list[int] = []

    async def screen(self, b: int) -> str:
        self.events.append(("screen", b))
        self.screening += 1
        self.most = max(self.most, self.screening)
        try:
            await asyncio.sleep(0.001 * (b % 3))  # screens finish out of order
            return f"screened {b}"
        except asyncio.CancelledError:
            self.cancelled.append(b)
            raise
        finally:
            self.screening -= 1

    async def write(self, b: int, screened: str) -> None:
        assert screened == f"screened {b}"
        self.events.append(("write", b))
        await asyncio.sleep(0.002)  # the next screens run meanwhile


@pytest.mark.parametrize("ahead", [1, 2, 3])
async def test_batches_are_written_in_order_with_at_most_ahead_screened_meanwhile(ahead: int) -> None:
    t = _Trace()
    await _pipelined(iter(range(7)), t.screen, t.write, ahead=ahead)
    assert [b for kind, b in t.events if kind == "write"] == list(range(7))
    assert [b for kind, b in t.events if kind == "screen"] == list(range(7))
    assert t.most == min(ahead, 7)
    for n, (kind, b) in enumerate(t.events):  # no batch is screened more than ``ahead`` beyond the one written
        if kind == "screen":
            written = sum(1 for k, _ in t.events[:n] if k == "write")
            assert b < written + ahead


async def test_a_failed_write_cancels_the_screens_in_flight_and_writes_nothing_after_it() -> None:
    t = _Trace()

    async def write(b: int, screened: str) -> None:
        if b == 2:
            raise ValueError("batch 2")
        await t.write(b, screened)

    async def slow_screen(b: int) -> str:
        if b > 2:
            await asyncio.sleep(1)
        return await t.screen(b)

    with pytest.raises(ValueError, match="batch 2"):
        await _pipelined(iter(range(10)), slow_screen, write, ahead=3)
    assert [b for kind, b in t.events if kind == "write"] == [0, 1]
    assert max(b for kind, b in t.events if kind == "screen") <= 4  # 2, then 3 and 4 at most in flight


async def test_no_batches_no_calls() -> None:
    t = _Trace()
    await _pipelined(iter(()), t.screen, t.write, ahead=2)
    assert t.events == []


def test_the_gil_switch_interval_is_set_inside_and_restored_after_even_on_error() -> None:
    import sys

    from app.write.bulk import BulkConfig, gil_switch

    before = sys.getswitchinterval()
    with gil_switch(BulkConfig().gil_switch_s):
        assert sys.getswitchinterval() == pytest.approx(0.0005)
    assert sys.getswitchinterval() == before
    with pytest.raises(RuntimeError), gil_switch(0.001):
        assert sys.getswitchinterval() == pytest.approx(0.001)
        raise RuntimeError
    assert sys.getswitchinterval() == before
    with gil_switch(None):
        assert sys.getswitchinterval() == before


@pytest.mark.parametrize("first_ends_first", [True, False])
def test_overlapping_imports_leave_the_interval_as_it_was_before_both(first_ends_first: bool) -> None:
    import sys

    from app.write.bulk import gil_switch

    before = sys.getswitchinterval()
    a, b = gil_switch(0.0005), gil_switch(0.0005)
    a.__enter__()
    b.__enter__()
    for cm in ((a, b) if first_ends_first else (b, a)):
        cm.__exit__(None, None, None)
    assert sys.getswitchinterval() == before
