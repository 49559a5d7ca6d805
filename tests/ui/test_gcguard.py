"""Cyclic garbage is collected on the GUI thread, never in a worker that happens to allocate."""

from __future__ import annotations

import gc
import threading
import weakref

from PySide6.QtCore import QObject

from gpumon.ui.window import gcguard


class Holder:
    """A reference cycle holding a Qt object, as a closed panel's items can be."""

    def __init__(self) -> None:
        self.qobject = QObject()
        self.me = self


def test_cycles_with_qt_objects_are_collected_on_the_gui_thread(qtbot) -> None:  # type: ignore[no-untyped-def]
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
    timer = gcguard._timer
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


def test_each_snapshot_collects_and_puts_the_timer_off(qtbot) -> None:  # type: ignore[no-untyped-def]
    """The collection rides on the snapshots' wake-up: the timer, which would wake the
    GUI thread on its own, fires only when no snapshot came for its whole interval."""
    from gpumon.telemetry.sources.simulated import SimulatedSource
    from gpumon.ui.window.workers import SamplingThread

    assert gcguard.installed()
    timer = gcguard._timer
    assert timer is not None and timer.interval() == gcguard.INTERVAL_MS
    fired: list[int] = []

    def count() -> None:
        fired.append(1)

    timer.timeout.connect(count)
    timer.setInterval(400)  # the test's: shorter, the same rule
    sampling = SamplingThread(lambda: SimulatedSource(1, seed=3), 0.1)
    collected_in: list[str] = []
    try:
        with qtbot.waitSignal(sampling.snapshot, timeout=5000):
            sampling.start()
        gc.collect()
        holders = [Holder() for _ in range(gc.get_threshold()[0] + 10)]
        weakref.finalize(holders[0], lambda: collected_in.append("collected"))
        del holders  # cycles only: due for generation 0 now
        with qtbot.waitSignal(sampling.snapshot, timeout=5000):
            pass
        assert collected_in == ["collected"]  # by the snapshot's delivery
        qtbot.wait(800)  # eight snapshots, no timeout
        assert fired == []
        assert sampling.stop()
        qtbot.waitUntil(lambda: bool(fired), timeout=3000)  # no snapshots now: the timer
    finally:
        sampling.stop()
        timer.timeout.disconnect(count)
        timer.setInterval(gcguard.INTERVAL_MS)
