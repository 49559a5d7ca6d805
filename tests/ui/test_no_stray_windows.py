"""Building the GPU panels shows no widget as a window of its own. A widget shown before it
has a parent is a top-level window: each new panel, and its health mark, was shown so for a
moment (a window per GPU on a desktop), and the main window lost its activation to them, so
its shortcuts (Alt+S, Alt+M on the Lesson tab) went nowhere after the first snapshot."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QWidget

from gpumon.telemetry.sources.simulated import SimulatedSource
from tests.qt_fixtures import activate


class WindowsShown(QObject):
    """The widgets shown as windows, other than ``main``."""

    def __init__(self, main: QWidget) -> None:
        super().__init__()
        self.main = main
        self.shown: list[str] = []

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if (event.type() == QEvent.Type.Show and isinstance(obj, QWidget) and obj.isWindow()
                and obj is not self.main):
            self.shown.append(f"{type(obj).__name__} {obj.objectName()}")
        return False


def test_the_panels_are_built_without_a_window_of_their_own(qtbot, make_window):
    w = make_window(lambda: SimulatedSource(2, seed=1), show=False)
    windows = WindowsShown(w)
    app = QApplication.instance()
    app.installEventFilter(windows)
    try:
        w.show()
        activate(qtbot, w)
        qtbot.waitUntil(lambda: len(w.gpu_grid.panels) == 2 and w.snapshot_count >= 2,
                        timeout=10000)
        assert w.isActiveWindow()  # the panels took nothing from it
        w.switch_source(lambda: SimulatedSource(3, seed=2))  # other GPUs: panels again
        qtbot.waitUntil(lambda: len(w.gpu_grid.panels) == 3, timeout=10000)
        w.gpu_grid.set_hidden({1})
        w.gpu_grid.set_hidden(set())
        QApplication.processEvents()
    finally:
        app.removeEventFilter(windows)
    assert windows.shown == []
    assert w.isActiveWindow()
