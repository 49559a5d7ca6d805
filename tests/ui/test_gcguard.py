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
    qtbot.waitUntil(lambda: bool(collected_in), timeout=5000)
    assert collected_in == [threading.current_thread().name]


def test_collect_follows_the_interpreters_thresholds() -> None:
    gc.collect()
    assert gcguard.collect() == 0  # nothing allocated since: no collection at all
    holders = [Holder() for _ in range(gc.get_threshold()[0] + 10)]
    del holders
    assert gcguard.collect() >= 1  # generation 0 was due and found the cycles
