"""The window appears first: sampling starts once the window has painted its first frame
(``SamplingThread.start``), so that frame comes before the first snapshot is handled, and the
grid says meanwhile that it is reading the GPUs (not that there are none) and the badge that
the source is being opened (WAITING, not NO SOURCE)."""

from __future__ import annotations

import time

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QLabel, QWidget


class FirstPaint(QObject):
    """What the window had handled when a widget of it was first painted."""

    def __init__(self, window: QWidget) -> None:
        super().__init__()
        self.window = window
        self.seen: tuple[int, str, str] | None = None  # (snapshots handled, grid, badge)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if (self.seen is None and event.type() == QEvent.Type.Paint
                and isinstance(obj, QWidget) and obj.window() is self.window):
            empty = self.window.gpu_grid.findChild(QLabel, "noGpusLabel")
            self.seen = (self.window.snapshot_count, empty.text(),
                         self.window.header.source_badge.text())
        return False


def test_the_window_is_painted_before_its_first_snapshot_is_handled(qtbot, make_window):
    w = make_window(interval_s=0.05, show=False)
    first = FirstPaint(w)
    app = QApplication.instance()
    app.installEventFilter(first)
    try:
        w.show()
        time.sleep(0.4)  # the GUI thread busy: a thread started at show() has read by now
        qtbot.waitUntil(lambda: first.seen is not None and w.snapshot_count >= 3, timeout=10000)
    finally:
        app.removeEventFilter(first)
    assert first.seen == (0, "Reading the GPUs…", "WAITING")
    assert len(w.gpu_grid.panels) == 4


def test_a_window_closed_before_its_first_frame_never_starts_sampling(qtbot, make_window):
    w = make_window(show=False)
    w.show()
    w.close()  # before the event loop has run: no frame painted yet
    qtbot.wait(200)  # not awaiting: the first frame's start, if it came, would have come
    assert not w.sampling.running and w.snapshot_count == 0
