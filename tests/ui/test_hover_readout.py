"""The hover readout and crosshair: gone when the pointer leaves a graph, and current under a
still pointer while the data scrolls (it used to show one stale reading for minutes)."""

from __future__ import annotations

from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QApplication

from gpumon.ui.window.controls import HOVER_HINT


def test_leaving_a_graph_clears_the_readout_and_the_crosshair(qtbot, make_window):
    w = make_window()
    qtbot.waitUntil(lambda: w.snapshot_count >= 5, timeout=5000)
    panel = w.gpu_panel(0)
    view = panel.memory_widget
    panel.hover_at(-0.2)  # what a pointer move over the graph does
    assert w.controls.hover_readout.text().startswith("GPU 0 at ")
    assert any(line.isVisible() for line in panel._cross)
    QApplication.sendEvent(view.viewport(), QEvent(QEvent.Type.Leave))
    assert w.controls.hover_readout.text() == HOVER_HINT
    assert not any(line.isVisible() for line in panel._cross)


def test_a_still_pointer_reads_the_time_under_it_as_the_data_moves(qtbot, make_window):
    w = make_window()
    qtbot.waitUntil(lambda: w.snapshot_count >= 5, timeout=5000)
    panel = w.gpu_panel(1)
    times: list[float] = []
    panel.hovered.connect(lambda _gpu, t: times.append(t))
    panel.hover_at(-0.3)
    first = times[-1]
    qtbot.waitUntil(lambda: times[-1] > first + 0.15, timeout=5000)  # no pointer event came
    assert w.controls.hover_readout.text().startswith("GPU 1 at ")
    # The readout follows: it reads the time 0.3 s before the newest snapshot.
    snap = w.latest_snapshot
    assert snap is not None and abs(times[-1] - (panel._t_ref - 0.3)) < 1e-6
