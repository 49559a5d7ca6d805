"""The main window on simulated GPUs: values appear, controls act, faults show."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import numpy as np
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QLabel, QPushButton, QTableView, QWidget

from gpumon.telemetry.model.types import Source
from gpumon.telemetry.sources.simulated import SimulatedFaults, SimulatedSource


def simulated(n: int = 4, faults: SimulatedFaults | None = None) -> Callable[[], Source]:
    return lambda: SimulatedSource(n, seed=1, faults=faults)


def test_window_shows_simulated_gpus(qtbot, make_window):
    w = make_window()
    qtbot.waitUntil(lambda: w.snapshot_count >= 3, timeout=5000)
    assert "(simulated)" in w.windowTitle()
    readouts = [w.findChild(QLabel, f"readouts{i}") for i in range(4)]
    assert None not in readouts
    # A panel's readouts are written once it is laid out and shown: snapshots that were
    # queued while the GUI thread built the panels (a loaded machine) come before that.
    qtbot.waitUntil(lambda: all("Temp" in label.text() for label in readouts), timeout=5000)
    for i in range(4):
        assert w.gpu_panel(i) is not None and w.gpu_panel(i).objectName() == f"gpuPanel{i}"
    gpu_table = w.findChild(QTableView, "gpuTable")
    assert gpu_table.model().rowCount() == 4
    assert w.findChild(QTableView, "processTable").model().rowCount() > 0
    status = w.findChild(QLabel, "statusLine")
    assert "4 GPUs" in status.text()
    assert w.findChild(QLabel, "sourceBadge").text() == "SIMULATED"
    assert not w.banner.isVisible()
    assert w.history.count(0) >= 3


def test_widgets_have_names(make_window):
    w = make_window(show=False)
    for name in ("processTable", "gpuTable", "intervalSpin", "windowCombo", "pauseButton",
                 "statusBanner", "simulateButton", "statusLine", "eventsBadge"):
        widget = w.findChild(object, name)
        assert widget is not None, name
        assert widget.accessibleName(), name


def test_pause_stops_updates_and_resume_restarts(qtbot, make_window):
    w = make_window()
    qtbot.waitUntil(lambda: w.snapshot_count >= 2, timeout=5000)
    with qtbot.waitSignal(w.sampling.pausedChanged, timeout=5000):
        qtbot.mouseClick(w.findChild(QPushButton, "pauseButton"), Qt.MouseButton.LeftButton)
    assert w.paused
    assert "Paused" in w.header.status_line.text()
    frozen = w.snapshot_count
    assert w.sampling.worker.next_tick_ms is None  # no tick is coming
    QApplication.processEvents()  # a tick already on its way is delivered, and dropped
    assert w.snapshot_count == frozen
    assert not w.stale  # paused is not stale
    with qtbot.waitSignal(w.sampling.pausedChanged, timeout=5000):
        qtbot.mouseClick(w.controls.pause_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: w.snapshot_count >= frozen + 3, timeout=5000)


def test_a_snapshot_taken_before_the_pause_arrives_does_not_change_the_paused_view(
        qtbot, make_window):
    """Pausing takes effect in the sampler a moment later; a tick already on its way must not
    add rows to the history the person paused on (an export then missed them: 20 != 24)."""
    w = make_window()
    qtbot.waitUntil(lambda: w.snapshot_count >= 2, timeout=5000)
    w.set_paused(True)
    latest, count, rows = w.latest_snapshot, w.snapshot_count, w.history.count(0)
    late = SimulatedSource(4, seed=9)
    late.open()
    w.sampling.snapshot.emit(late.sample())  # as a tick that ended just after the click
    assert (w.latest_snapshot, w.snapshot_count, w.history.count(0)) == (latest, count, rows)
    w.set_paused(False)
    qtbot.waitUntil(lambda: w.snapshot_count > count, timeout=5000)


def test_interval_change_takes_effect(qtbot, make_window):
    """Each shot of the sampler's timer aims at the next slot of the interval, so its
    interval is at most the sampling interval: read after the change, rather than snapshots
    counted per second, which a loaded machine slows down."""
    w = make_window(interval_s=0.5)
    qtbot.waitUntil(lambda: w.snapshot_count >= 1, timeout=5000)
    worker = w.sampling.worker
    qtbot.waitUntil(lambda: 0 < (worker.next_tick_ms or 0) <= 500, timeout=3000)
    with qtbot.waitSignal(w.sampling.intervalChanged, timeout=5000):
        w.controls.interval_spin.setValue(0.1)
    count = w.snapshot_count
    qtbot.waitUntil(lambda: w.snapshot_count >= count + 3, timeout=5000)
    # at 0.5 s a shot after a tick is ~490 ms away
    qtbot.waitUntil(lambda: 0 < (worker.next_tick_ms or 0) <= 100, timeout=3000)
    assert w.history.capacity >= 60 / 0.1


def test_widening_the_window_shows_data_already_sampled(make_window):
    """History always holds the longest window, whatever window is on screen."""
    w = make_window(show=False, interval_s=1.0, window_s=60)
    clock = [1_000_000.0]
    src = SimulatedSource(2, seed=1, clock=lambda: clock[0])
    src.open()
    for _ in range(600):  # ten minutes at 1 s while a 1-minute window is shown
        clock[0] += 1.0
        w.sampling.snapshot.emit(src.sample())
    w.controls.window_combo.setCurrentIndex(w.controls.window_combo.findData(900))
    assert w.window_s == 900
    times, values = w.history.series(0, "gpu_util_pct", since=clock[0] - 900)
    assert len(times) == 600 and times[-1] - times[0] == 599


def test_lost_gpu_is_marked_while_others_update(qtbot, make_window):
    w = make_window(simulated(4, SimulatedFaults(lost_after_s={2: 0.3})))
    qtbot.waitUntil(lambda: w.gpu_panel(2) is not None and w.gpu_panel(2).lost, timeout=5000)
    lost_label = w.findChild(QLabel, "lostLabel2")
    assert lost_label.isVisible() and lost_label.text().startswith("LOST — ")
    assert not w.gpu_panel(0).lost
    before = w.history.count(0)
    qtbot.waitUntil(lambda: w.history.count(0) >= before + 3, timeout=5000)
    assert "lost" in w.header.status_line.text()
    model = w.smi_table.model()
    assert "lost" in model.data(model.index(2, 5))


class _SlowAfterFirst(SimulatedSource):
    """Reads at once the first time, then takes 1.2 s a reading: a driver that turned slow.
    (A source slow from its first reading is read less often, and says so: the window then
    counts staleness on that longer period; test_slow_reading.py.)"""

    reading = threading.Event()  # set while a slow reading is under way

    def __init__(self) -> None:
        super().__init__(2, seed=1)
        self._reads = 0

    def sample(self, include_slow: bool = True):
        self._reads += 1
        if self._reads > 1:
            self.reading.set()
            time.sleep(1.2)
            self.reading.clear()
        return super().sample(include_slow)


def test_slow_calls_keep_window_responsive_and_show_stale(qtbot, make_window):
    w = make_window(_SlowAfterFirst)
    qtbot.waitUntil(lambda: w.snapshot_count >= 1, timeout=5000)
    # The worker now sleeps in sample(); the GUI thread keeps running its own timers: it
    # says stale while that reading is still under way, and ticks a timer of its own then.
    ticks_while_reading = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks_while_reading.append(_SlowAfterFirst.reading.is_set()))
    timer.start(10)
    try:
        qtbot.waitUntil(lambda: w.stale and _SlowAfterFirst.reading.is_set(), timeout=5000)
        assert "data is stale (last update" in w.header.status_line.text()
        assert all(p.stale for p in w.gpu_grid.panels)
        qtbot.waitUntil(lambda: ticks_while_reading.count(True) >= 5, timeout=5000)
    finally:
        timer.stop()
    w.controls.interval_spin.setValue(2.0)  # the GUI still reacts to input
    assert w.interval_s == 2.0


def test_no_driver_banner_and_switch_to_simulated(qtbot, make_window):
    from gpumon.telemetry.nvml.source import NvmlSource

    w = make_window(NvmlSource)
    qtbot.waitUntil(lambda: w.banner.isVisible(), timeout=5000)
    text = w.banner.text()
    assert len(text.split()) >= 5 and "." in text  # a sentence, not a code
    # the banner comes with the status, the badge with the first snapshot after it
    qtbot.waitUntil(lambda: "NVML" in w.findChild(QLabel, "sourceBadge").text(), timeout=5000)
    assert "(simulated)" not in w.windowTitle()
    assert not w.stale
    qtbot.mouseClick(w.findChild(QPushButton, "simulateButton"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(w.gpu_grid.panels) == 4, timeout=5000)
    qtbot.waitUntil(lambda: "(simulated)" in w.windowTitle(), timeout=5000)
    assert not w.banner.isVisible()
    assert w.header.source_badge.text() == "SIMULATED"


def test_one_and_sixteen_gpus_lay_out(qtbot, make_window):
    one = make_window(simulated(1))
    qtbot.waitUntil(lambda: len(one.gpu_grid.panels) == 1, timeout=5000)
    sixteen = make_window(simulated(16), interval_s=0.5)
    qtbot.waitUntil(lambda: len(sixteen.gpu_grid.panels) == 16, timeout=5000)
    grid = sixteen.gpu_grid
    layout = grid.widget().layout()
    positions = {layout.getItemPosition(layout.indexOf(p))[:2] for p in grid.panels}
    assert len(positions) == 16  # no two panels share a cell
    cols = 1 + max(c for _, c in positions)
    assert 2 <= cols <= 4
    # every panel gets its readouts; they come a few panels a frame (reveal.py), so under
    # load the second snapshot can arrive before the last panels are filled
    qtbot.waitUntil(lambda: all(p.readouts.text() for p in grid.panels), timeout=10000)


def test_hover_readout_shows_values(qtbot, make_window):
    w = make_window()
    qtbot.waitUntil(lambda: w.snapshot_count >= 5, timeout=5000)
    panel = w.gpu_panel(1)
    # laid out and shown after the snapshot that made it, and after those queued meanwhile
    qtbot.waitUntil(panel.isVisible, timeout=5000)
    panel.hover_at(-0.2)
    box = panel.findChild(QWidget, "hoverReadout")
    assert box is not None and box.isVisible() and box.accessibleName()
    text = box.text()
    assert text.startswith("GPU 1 at ") and "Memory used" in text and "GiB" in text


def test_extra_series_and_markers(qtbot, make_window):
    w = make_window()
    w.sampling.add_extra_provider(lambda snap: {0: {"torch_allocated_bytes": 2**30}})
    qtbot.waitUntil(lambda: w.gpu_panel(0) is not None, timeout=5000)
    panel = w.gpu_panel(0)
    curve = panel.add_memory_series("torch_allocated_bytes", "torch allocated", "#d62728")
    line = panel.add_marker(time.time(), "x.to('cuda:0')", "#444")

    def plotted() -> int:
        y = curve.getData()[1]
        return 0 if y is None else int((y == 1.0).sum())

    qtbot.waitUntil(lambda: plotted() >= 2, timeout=5000)
    assert curve.getData()[1][-1] == 1.0  # 1 GiB
    assert -1.0 < line.value() <= 0.5


def test_playground_and_lesson_pages_are_built_when_first_shown(qtbot, make_window):
    """Start-up builds neither page; choosing a tab builds it in place, current and shown."""
    w = make_window()
    titles = [w.tabs.tabText(i) for i in range(w.tabs.count())]
    assert titles == ["Monitor", "Playground", "Lesson"]
    assert w.findChild(QWidget, "playgroundPanel") is None
    assert w.findChild(QWidget, "lessonPage") is None
    lesson_index = titles.index("Lesson")
    seen: list[int] = []
    w.tabs.currentChanged.connect(seen.append)
    w.tabs.setCurrentIndex(lesson_index)
    # built once the frame that shows its tab chosen (and "Opening the Lesson page…")
    assert w.tabs.currentWidget().objectName() == "lazyPage_Lesson"
    qtbot.waitUntil(lambda: w.findChild(QWidget, "lessonPage") is not None, timeout=5000)
    page = w.findChild(QWidget, "lessonPage")
    assert page is not None and w.tabs.currentWidget() is page and page.isVisible()
    assert w.tabs.indexOf(page) == lesson_index and w.tabs.tabText(lesson_index) == "Lesson"
    assert seen[-1] == lesson_index
    assert w.lesson is page  # built once
    # The Lesson builds the Playground page too (not shown): its link marks the lesson's
    # actions on the graphs, exactly as the Playground's own.
    panel = w.findChild(QWidget, "playgroundPanel")
    assert panel is not None and w.playground is panel and not panel.isVisible()
    assert w.tabs.currentWidget() is page
    assert w.page("Monitor") is w.tabs.widget(0)
    w.tabs.setCurrentIndex(0)
    assert w.gpu_grid.isVisible()


def test_choosing_the_playground_tab_builds_it_and_it_borrows_the_graphs(qtbot, make_window):
    w = make_window()
    qtbot.waitUntil(lambda: w.snapshot_count > 0)
    w.tabs.setCurrentIndex(1)
    qtbot.waitUntil(lambda: w.findChild(QWidget, "playgroundPanel") is not None, timeout=5000)
    panel = w.findChild(QWidget, "playgroundPanel")
    assert panel is not None and w.tabs.currentWidget() is panel and w.playground is panel
    qtbot.waitUntil(lambda: w.gpu_grid.parent() is panel.graphs, timeout=3000)
    assert w.gpu_grid.isVisible()
    w.tabs.setCurrentIndex(0)
    qtbot.waitUntil(lambda: w.gpu_grid.parent() is w.findChild(QWidget, "monitorPage"),
                    timeout=3000)


def test_the_title_says_no_gpu_data_as_soon_as_the_status_does(qtbot, make_window, monkeypatch):
    """The banner comes with the status; the title must not wait for the reading after it (a
    driver that is not loaded showed the banner under a title that read only the host, until
    the unavailable snapshot came: a race that a loaded machine lost)."""
    import threading

    from gpumon.telemetry.model.types import SourceState, SourceStatus
    from gpumon.telemetry.sources import sampler

    held = threading.Event()
    real = sampler.unavailable_snapshot

    def late(*args, **kwargs):  # the snapshot that follows the status, held back
        held.wait(5)
        return real(*args, **kwargs)

    monkeypatch.setattr(sampler, "unavailable_snapshot", late)

    class NotLoaded(SimulatedSource):
        def open(self) -> SourceStatus:
            super().open()
            return SourceStatus(SourceState.DRIVER_NOT_LOADED,
                                "The NVIDIA driver is installed but not running.")

    w = make_window(lambda: NotLoaded(1, seed=1))
    try:
        qtbot.waitUntil(lambda: w.banner.isVisible(), timeout=5000)
        assert w.latest_snapshot is None
        assert "(no GPU data)" in w.windowTitle()
    finally:
        held.set()
    qtbot.waitUntil(lambda: w.latest_snapshot is not None, timeout=5000)
    assert "(no GPU data)" in w.windowTitle()


def test_a_demo_opens_with_a_minute_already_drawn(qtbot, make_window):
    """The simulated GPUs ran a minute before the window opened: their first reading brings
    it, and the graphs start a minute long instead of empty (issue 54, item 12)."""
    from gpumon.telemetry.choice import DEMO_HISTORY_S
    from gpumon.ui.window.main_window import simulated_factory

    w = make_window(simulated_factory(4, seed=3), interval_s=1.0)
    qtbot.waitUntil(lambda: w.snapshot_count >= 1, timeout=5000)
    times, used = w.history.series(0, "mem_used_bytes")
    assert len(times) >= DEMO_HISTORY_S
    assert times[-1] - times[0] >= DEMO_HISTORY_S - 1.0
    assert np.isfinite(used).all() and np.ptp(used) > 0  # a minute of a moving workload
    curve = w.gpu_grid.panels[0]._mem_curve
    # a panel not yet laid out on screen when the reading came draws its curves when it is
    # (grid.update_view): on a loaded machine that is after the first reading
    qtbot.waitUntil(lambda: curve.xData is not None and len(curve.xData) > 0, timeout=5000)
    assert curve.xData[0] <= -(DEMO_HISTORY_S - 1.0)  # the curve reaches a minute back
