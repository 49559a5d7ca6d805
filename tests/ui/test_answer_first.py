"""A key is answered on screen first, and the heavy work follows the frame that answers it:
the graphs of a page that comes into view are veiled in that frame and unveiled a panel a
frame (reveal.py); a page shown the first time is built after a frame that shows its tab
chosen (lazy_tabs.py); "after the frame" really is after it (next_frame.py), where a 0 ms
timer ran before the window's low-priority repaint. No timing is asserted: the order is.
(benchmarks/bench_response.py measures the time.)"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QWidget
from qt_fixtures import settled

from gpumon.ui.widgets.next_frame import after_next_frame
from gpumon.ui.widgets.plot import LitePlotWidget


class Frames(QObject):
    """Counts the window's repaints (UpdateRequest) and notes what happened in each."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.count = 0
        window.installEventFilter(self)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.UpdateRequest:
            self.count += 1
        return False


class PaintWatch(QObject):
    """Notes (frame, veiled) for each paint of the graphs it follows."""

    def __init__(self, frames: Frames, painted: list[tuple[int, bool]]) -> None:
        super().__init__()
        self.frames, self.painted = frames, painted
        self.plots: dict[QObject, LitePlotWidget] = {}

    def follow(self, plot: LitePlotWidget) -> None:
        self.plots[plot.viewport()] = plot
        plot.viewport().installEventFilter(self)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint and obj in self.plots:
            self.painted.append((self.frames.count, self.plots[obj].veiled))
        return False


def test_after_next_frame_runs_after_the_repaint_a_zero_timer_does_not(qtbot) -> None:
    window = QWidget()
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    frames = Frames(window)
    settled(lambda: frames.count)  # the first frames, already posted, are not the ones below
    seen: dict[str, int] = {}
    window.update()  # a repaint is due ...
    QTimer.singleShot(0, lambda: seen.setdefault("zero timer", frames.count))
    after_next_frame(window, lambda: seen.setdefault("after frame", frames.count))
    qtbot.waitUntil(lambda: len(seen) == 2, timeout=2000)
    start = frames.count - 1 if seen["after frame"] > seen["zero timer"] else frames.count
    assert seen["zero timer"] == start  # ... and the 0 ms timer ran before it
    assert seen["after frame"] == start + 1


def test_the_monitor_comes_back_with_its_graphs_veiled_then_unveiled(qtbot, make_window):
    w = make_window()
    qtbot.waitUntil(lambda: w.gpu_panel(3) is not None and w.snapshot_count >= 3, timeout=5000)
    w.show_tab("Lesson")
    qtbot.waitUntil(lambda: w.tabs.is_built("Lesson"), timeout=10000)
    plots = [p for panel in w.gpu_grid.panels for p in panel.plots()]
    painted: list[tuple[int, bool]] = []  # (frame, veiled) of each graph paint
    frames = Frames(w)
    watch = PaintWatch(frames, painted)
    for plot in plots:
        watch.follow(plot)
    w.show_tab("Monitor")
    assert all(p.veiled for p in plots)  # the frame that answers paints no graph
    first = frames.count + 1
    qtbot.waitUntil(lambda: not any(p.veiled for p in plots), timeout=5000)
    qtbot.waitUntil(lambda: len({frame for frame, veiled in painted if not veiled}) >= 2,
                    timeout=3000)  # the graphs drawn, a panel a frame
    in_first = [veiled for frame, veiled in painted if frame == first]
    assert in_first and all(in_first), (first, painted[:20])
    assert any(not veiled for _, veiled in painted)  # then the graphs were drawn
    unveiled_frames = {frame for frame, veiled in painted if not veiled}
    assert len(unveiled_frames) >= 2  # a panel a frame, not all in one


def test_a_page_shown_first_is_built_after_a_frame_that_shows_its_tab(qtbot, make_window):
    w = make_window()
    qtbot.waitUntil(lambda: w.snapshot_count >= 1, timeout=5000)
    w.show_tab("Lesson")
    placeholder = w.tabs.currentWidget()
    assert placeholder.objectName() == "lazyPage_Lesson"
    assert w.findChild(QWidget, "lessonPage") is None
    qtbot.waitUntil(lambda: w.tabs.is_built("Lesson"), timeout=10000)
    assert w.tabs.currentWidget() is w.lesson
    qtbot.waitUntil(lambda: w.lesson.isVisible(), timeout=3000)


def test_one_function_after_the_frame_that_raises_leaves_the_others_theirs(
        qtbot, monkeypatch) -> None:
    """Functions queued on one window's next frame run together; each as if alone."""
    import sys

    window = QWidget()
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    reported: list[type[BaseException]] = []
    monkeypatch.setattr(sys, "excepthook", lambda kind, *_: reported.append(kind))
    ran: list[str] = []

    def fails() -> None:
        raise ValueError("first")

    after_next_frame(window, fails)
    after_next_frame(window, lambda: ran.append("second"))
    window.update()
    qtbot.waitUntil(lambda: ran == ["second"], timeout=2000)
    assert reported == [ValueError]
