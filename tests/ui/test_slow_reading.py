"""A source that reads slower than the interval (10,000 GPUs from Prometheus: 1.1 s a reading
at 1 s) is read less often, and the window says so: "reading takes 1.1 s: sampling every 3 s".
The source here reports its reading's duration, as PrometheusSource does, without taking it."""

from __future__ import annotations

import dataclasses

from gpumon.telemetry.model.types import Snapshot
from gpumon.telemetry.sources.simulated import SimulatedSource
from gpumon.ui.window.workers import SamplerWorker


class Slow(SimulatedSource):
    """Says each reading took 1.1 s (a source that times its own reading)."""

    def __init__(self) -> None:
        super().__init__(2, seed=1)

    def sample(self, include_slow: bool = True) -> Snapshot:
        return dataclasses.replace(super().sample(include_slow), read_duration_s=1.1)


def test_the_worker_reads_less_often_when_reading_is_slow(qtbot) -> None:
    worker = SamplerWorker(Slow, 1.0)  # in this thread: its slots are called directly
    got: list[Snapshot] = []
    worker.snapshot.connect(got.append)
    worker.start()  # the first reading, at once
    try:
        assert got and got[-1].period_s == 3.0
        worker._on_timer()  # a tick: the next one is armed a period on, not an interval
        assert (worker.next_tick_ms or 0) > 2000
        assert got[-1].period_s == 3.0
        worker.set_interval(5.0)  # an interval long enough keeps its own period
        worker._on_timer()
        assert got[-1].period_s == 5.0 and (worker.next_tick_ms or 0) > 4000
    finally:  # not stop(): that quits the thread the worker lives in, here the test's own
        worker.set_paused(True)
        assert worker.next_tick_ms is None
        worker._close_source()


def test_the_window_says_so_and_does_not_call_it_stale(qtbot, make_window) -> None:
    w = make_window(Slow, interval_s=1.0)
    qtbot.waitUntil(lambda: w.snapshot_count >= 1, timeout=5000)
    qtbot.waitUntil(lambda: "sampling every" in w.header.status_line.text(), timeout=5000)
    assert w.header.status_line.text() == (
        "2 GPUs · reading takes 1.1 s: sampling every 3 s")
    assert w.status_text.stale_after_s() == 7.5  # 2.5 periods, not 2.5 intervals
