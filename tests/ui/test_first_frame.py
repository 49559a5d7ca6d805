"""The window appears first: sampling starts once the window has painted its first frame
(``SamplingThread.start``), so that frame comes before the first snapshot is handled, and the
grid says meanwhile that it is reading the GPUs (not that there are none) and the badge that
the source is being opened (WAITING, not NO SOURCE)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QLabel, QWidget

from gpumon.ui.widgets.theme import DARK


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


# gpumon as it starts (``python -m gpumon``) in a fresh process, with the dark theme saved:
# pyqtgraph at its first frame, then its first panels' graphs and pyqtgraph's default colours.
FRESH = r"""
import sys
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QWidget

app = QApplication(sys.argv)
seen = {}


class Watch(QObject):
    def eventFilter(self, obj, event):
        if "painted" not in seen and event.type() == QEvent.Type.Paint:
            seen["painted"] = "pyqtgraph" in sys.modules
        window = obj.window() if isinstance(obj, QWidget) else None
        grid = getattr(window, "gpu_grid", None)
        if "panels" not in seen and grid is not None and grid.panels:
            seen["panels"] = 0
            QTimer.singleShot(0, lambda: panels(window))  # once they are all made
        return False


def panels(window):
    import pyqtgraph as pg

    seen["panels"] = len(window.gpu_grid.panels)
    seen["default"] = pg.getConfigOption("background")
    seen["plot"] = window.gpu_grid.panels[0].memory_widget.backgroundBrush().color().name()
    window.close()


watch = Watch()
app.installEventFilter(watch)
QTimer.singleShot(30000, app.quit)
from gpumon.cli.main import main

sys.argv = ["gpumon", "--simulate", "2"]
status = main()
print(seen.get("painted"), seen.get("panels"), seen.get("default"), seen.get("plot"), status)
"""


def test_the_first_frame_comes_before_pyqtgraph_is_loaded_and_the_graphs_take_the_theme(
        tmp_path):
    """The first frame has no graph (none before the first snapshot), so pyqtgraph, ~40 % of
    a start's imports, loads after it, with the first panels; the theme chosen before then
    is the graphs' default (``theme.use_for_plots``) and theirs."""
    (tmp_path / "gpumon").mkdir()
    (tmp_path / "gpumon" / "gpumon.conf").write_text("[view]\ntheme=dark\n")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "XDG_CONFIG_HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", FRESH], env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "2", DARK.plot_bg, DARK.plot_bg, "0"]
