"""Qt fixtures shared by tests/ui, tests/faults and tests/gpu (re-exported by their conftests).

As in the app, Python's cyclic garbage collection runs on the GUI thread only
(``gpumon.ui.window.gcguard``): without that the suite hung now and then, a worker thread
destroying a window's Qt object of an earlier test while the GUI thread held the GIL.

A test that leaves a QThread or QTimer running fails, as in napari's conftest: QThread.start
and QTimer.start are wrapped to remember what was started, and after the test (and after
pytest-qt closed its widgets) anything still running is stopped and reported.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TypeVar

import pyqtgraph as pg
import pytest
import shiboken6
from PySide6.QtCore import (
    QElapsedTimer,
    QEvent,
    QEventLoop,
    QPoint,
    QRectF,
    Qt,
    QThread,
    QTimer,
)
from PySide6.QtGui import QHelpEvent, QImage
from PySide6.QtWidgets import QApplication, QTabWidget, QToolTip, QWidget

from gpumon.telemetry.model.types import Source
from gpumon.telemetry.sources.simulated import SimulatedSource
from gpumon.ui.widgets.plot import LitePlotWidget
from gpumon.ui.widgets.theme import LIGHT
from gpumon.ui.window import gcguard
from gpumon.ui.window.main_window import MainWindow
from gpumon.ui.window.presentation import base_font_and_palette
from gpumon.ui.window.settings import Settings

T = TypeVar("T")


@pytest.fixture(scope="session", autouse=True)
def _gc_on_the_gui_thread(qapp: object) -> None:
    assert gcguard.install()  # for the rest of the process, as in the app


@pytest.fixture(autouse=True)
def _no_dangling_qthreads_or_qtimers(
    monkeypatch: pytest.MonkeyPatch, qapp: object
) -> Iterator[None]:
    threads: list[QThread] = []
    timers: list[QTimer] = []
    thread_start = QThread.start
    timer_start = QTimer.start

    def start_thread(self: QThread, *args: object) -> None:
        threads.append(self)
        thread_start(self, *args)

    def start_timer(self: QTimer, *args: object) -> None:
        timers.append(self)
        timer_start(self, *args)

    monkeypatch.setattr(QThread, "start", start_thread)
    monkeypatch.setattr(QTimer, "start", start_timer)
    yield
    running = [t for t in threads if shiboken6.isValid(t) and t.isRunning()]
    # gcguard's timer is the session's (installed above); every snapshot restarts it
    active = [t for t in timers if shiboken6.isValid(t) and t.isActive()
              and t is not gcguard.timer()]
    for t in active:
        if t.thread() is QThread.currentThread():
            t.stop()
    for t in running:
        t.quit()
        t.wait(5000)
    problems = [f"QThread {t.objectName() or t!r} still running" for t in running]
    problems += [f"QTimer {t.objectName() or t!r} (interval {t.interval()} ms) still active"
                 for t in active]
    if problems:
        pytest.fail("left running after the test: " + "; ".join(problems), pytrace=False)


WindowFactory = Callable[..., MainWindow]


@pytest.fixture
def make_window(qtbot, kernel_fork_server) -> Iterator[WindowFactory]:
    """Open a MainWindow on ``source`` (a factory; default 4 simulated GPUs), shown.

    The windows are held here until pytest-qt has closed them: a window that is only
    garbage-collected never gets its closeEvent, so its sampling thread would outlive it.
    """
    windows: list[MainWindow] = []

    def make(source: Callable[[], Source] | None = None, *, interval_s: float = 0.1,
             window_s: int = 60, show: bool = True) -> MainWindow:
        factory = source or (lambda: SimulatedSource(4, seed=1))
        window = MainWindow(factory, interval_s, window_s=window_s,
                            demo_factory=lambda: SimulatedSource(4, seed=2))
        qtbot.addWidget(window)
        window.resize(1400, 900)
        if show:
            window.show()
        windows.append(window)
        return window

    yield make
    for window in windows:
        window.close()



@pytest.fixture
def restore_app_look(qapp: object) -> Iterator[None]:
    """Zoom and theme are application-wide: put the 100 % light look back after the test."""
    yield
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    font, palette = base_font_and_palette()
    app.setFont(font)
    app.setPalette(palette)
    pg.setConfigOptions(background=LIGHT.plot_bg, foreground=LIGHT.plot_fg)


def settled(measure: Callable[[], T], quiet_passes: int = 5, most_passes: int = 100,
            quiet_ms: int = 0) -> T:
    """``measure()`` once what was posted to the event loop has been handled (layout
    requests, font changes, the zero-time timers that fit a column or the window) and what
    that posted in turn: the result unchanged over ``quiet_passes`` passes of the loop in a
    row. It counts passes, never time, so a slow machine cannot make it measure too early.
    ``quiet_ms``: then also unchanged while the loop runs that long, for what a timer with a
    delay sets off (a frame's fallback, a debounce); a change starts the count again."""
    last, quiet = measure(), 0
    for _ in range(most_passes):
        QApplication.processEvents()
        now = measure()
        quiet = quiet + 1 if now == last else 0
        if quiet >= quiet_passes:
            if not quiet_ms or _unchanged_for(measure, now, quiet_ms):
                return now
            quiet, now = 0, measure()  # it changed meanwhile: count again from here
        last = now
    raise AssertionError(f"still changing after {most_passes} passes of the event loop: {last}")


def _unchanged_for(measure: Callable[[], T], value: T, ms: int) -> bool:
    """Whether ``measure()`` stays ``value`` while the event loop runs ``ms`` milliseconds."""
    timer = QElapsedTimer()
    timer.start()
    while timer.elapsed() < ms:
        QApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 10)
        QThread.msleep(5)
        if measure() != value:
            return False
    return True


def hidden_or_minimised(widget: QWidget) -> bool:
    """Qt says ``widget`` is out of sight: hidden (another tab in front), or its window
    minimised. (Asked of Qt itself, not through ``gpumon/ui/widgets/seen.py``, which the
    tests that wait for it check.)"""
    return not widget.isVisible() or widget.window().isMinimized()


def first_curve(plot: pg.GraphicsView) -> pg.PlotDataItem:
    """The first curve drawn in ``plot`` (a panel's memory or utilization graph: the one the
    panel draws from its history)."""
    return plot.getPlotItem().listDataItems()[0]


def monitor_fitted(w: MainWindow) -> bool:
    """The Monitor page has sized its parts as it plans (``MonitorPage.fit``) and every graph
    is drawn at its size: what the page looks like once its first layouts have run."""
    page = w.monitor_page
    plots = w.findChildren(LitePlotWidget)
    return (page.sizes() == page.planned_sizes()
            and not any(p.veiled or p.plot_item.geometry() != QRectF(p.rect()) for p in plots
                        if p.isVisible()))


def activate(qtbot, w) -> None:
    """Make ``w`` the active window: window shortcuts (Esc, Space, Ctrl+1/2/3) need that."""
    def active() -> bool:  # offscreen now and then ignores one request: ask again
        if not w.isActiveWindow():
            w.raise_()
            w.activateWindow()
        return w.isActiveWindow()

    qtbot.waitUntil(active, timeout=5000)


def first_of_two_tabs(qtbot, widget: QWidget) -> QTabWidget:
    """``widget`` on the first of two tabs, shown and exposed (for ``out_of_sight``)."""
    tabs = QTabWidget()
    qtbot.addWidget(tabs)
    tabs.addTab(widget, "first")
    tabs.addTab(QWidget(), "other")
    with qtbot.waitExposed(tabs):
        tabs.show()
    return tabs


def out_of_sight(tabs: QTabWidget, how: str) -> None:
    """Take the first tab's widget out of sight: ``how`` "tab" puts the other tab in front,
    "minimised" minimises the window (Qt still calls its widgets visible then)."""
    if how == "tab":
        tabs.setCurrentIndex(1)
    else:
        tabs.showMinimized()


def back_in_sight(tabs: QTabWidget, how: str) -> None:
    """Undo ``out_of_sight(tabs, how)``."""
    if how == "tab":
        tabs.setCurrentIndex(0)
    else:
        tabs.showNormal()


def logical_image(widget: QWidget) -> QImage:
    """``widget`` as drawn, one pixel per logical pixel: ``grab()`` gives device pixels
    (1.5 times as many each way at 150 %), and tests that read a pixel at a widget's
    coordinates read it here (nearest pixel: the colours are as drawn)."""
    image = widget.grab().toImage()
    if image.devicePixelRatio() == 1.0:
        return image
    image = image.scaled(widget.size(), Qt.AspectRatioMode.IgnoreAspectRatio,
                         Qt.TransformationMode.FastTransformation)
    image.setDevicePixelRatio(1.0)
    return image


def shown_tip(widget: QWidget) -> str:
    """The tooltip ``widget`` shows when the pointer rests on it: the tooltip event a hover
    sends (tooltips made only then, lazy_tip.py, are made by it), then its text."""
    at = QPoint(2, 2)
    QApplication.sendEvent(widget, QHelpEvent(QEvent.Type.ToolTip, at, widget.mapToGlobal(at)))
    QToolTip.hideText()
    return widget.toolTip()


def zoomed_window(qtbot, zoom: float, gpus: int = 4, size: tuple[int, int] = (1400, 900),
                  readings: int = 2) -> MainWindow:
    """A main window on ``gpus`` simulated GPUs at ``zoom`` (its settings in memory), shown at
    ``size``, once it has shown ``readings`` readings."""
    settings = Settings.memory()
    settings.zoom = zoom
    w = MainWindow(lambda: SimulatedSource(gpus, seed=1), 0.2, window_s=60, settings=settings)
    qtbot.addWidget(w)
    w.resize(*size)
    w.show()
    qtbot.waitExposed(w)
    qtbot.waitUntil(lambda: w.snapshot_count >= readings, timeout=10000)
    return w
