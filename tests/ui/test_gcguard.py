"""Cyclic garbage is collected on the GUI thread, never in a worker that happens to allocate."""

from __future__ import annotations

import gc
import threading
import weakref

from PySide6.QtCore import QObject, QTimer

from gpumon.ui.window import gcguard


class Holder:
    """A reference cycle holding a Qt object, as a closed panel's items can be."""

    def __init__(self) -> None:
        self.qobject = QObject()
        self.me = self


def test_cycles_with_qt_objects_are_collected_on_the_gui_thread(qtbot) -> None:
    assert gcguard.installed() and not gc.isenabled()  # the session fixture installed it
    collected_in: list[str] = []
    holder = Holder()
    weakref.finalize(holder, lambda: collected_in.append(threading.current_thread().name))
    del holder

    kept: list[list[object]] = []

    def allocate() -> None:  # far past the generation-0 threshold, in a worker thread
        # kept alive: the count the threshold is checked against is allocations minus
        # deallocations, so lists made and dropped at once would never reach it
        kept.extend([] for _ in range(20 * gc.get_threshold()[0]))

    worker = threading.Thread(target=allocate, name="worker")
    worker.start()
    worker.join()
    assert gc.get_count()[0] > gc.get_threshold()[0]  # a collection is due
    assert collected_in == []  # the worker's allocations collected nothing
    timer = gcguard.timer()
    assert timer is not None
    timer.start(200)  # no snapshots here: the timer collects (200 ms: the test's)
    try:
        qtbot.waitUntil(lambda: bool(collected_in), timeout=5000)
    finally:
        timer.start(gcguard.INTERVAL_MS)
    assert collected_in == [threading.current_thread().name]


def test_collect_follows_the_interpreters_thresholds() -> None:
    gc.collect()
    assert gcguard.collect() == 0  # nothing allocated since: no collection at all
    holders = [Holder() for _ in range(gc.get_threshold()[0] + 10)]
    del holders
    assert gcguard.collect() >= 1  # generation 0 was due and found the cycles


class RecordingTimer(QTimer):
    """A timer that counts its (re)starts: what ``gcguard.tick`` does to its timer."""

    def __init__(self) -> None:
        super().__init__()
        self.starts = 0

    def start(self, *args: int) -> None:
        self.starts += 1
        super().start(*args)


def test_each_snapshot_collects_and_puts_the_timer_off(qtbot, monkeypatch) -> None:
    """The collection rides on the snapshots' wake-up: each delivery collects and starts the
    timer, which would wake the GUI thread on its own, over again, so it fires only when no
    snapshot came for its whole interval. Each delivery is checked, rather than the fires
    counted over a wall-clock window: on a loaded machine two snapshots can be an interval
    apart, and the timer then rightly fires."""
    from gpumon.telemetry.sources.simulated import SimulatedSource
    from gpumon.ui.window.workers import SamplingThread

    assert gcguard.installed()
    own = gcguard.timer()
    assert own is not None and own.interval() == gcguard.INTERVAL_MS
    timer = RecordingTimer()  # in its place for this test, with a shorter interval
    timer.timeout.connect(gcguard.collect)
    fired: list[int] = []
    timer.timeout.connect(lambda: fired.append(1))
    timer.start(400)
    monkeypatch.setattr(gcguard, "_timer", timer)
    sampling = SamplingThread(lambda: SimulatedSource(1, seed=3), 0.1)
    collected_in: list[str] = []
    try:
        with qtbot.waitSignal(sampling.snapshot, timeout=5000):
            sampling.start()
        gc.collect()
        holders = [Holder() for _ in range(gc.get_threshold()[0] + 10)]
        weakref.finalize(holders[0], lambda: collected_in.append("collected"))
        del holders  # cycles only: due for generation 0 now
        for _ in range(3):
            starts = timer.starts
            with qtbot.waitSignal(sampling.snapshot, timeout=5000):
                pass
            assert collected_in == ["collected"]  # by the first snapshot's delivery
            assert timer.starts > starts and timer.isActive()  # put off by a whole interval
            assert timer.interval() == 400
        assert sampling.stop()
        fired.clear()
        qtbot.waitUntil(lambda: bool(fired), timeout=3000)  # no snapshots now: the timer
    finally:
        sampling.stop()
        timer.stop()
