"""The hover readout and crosshair: a box beside the pointer over the graph (not in the
toolbar, 300-1000 px away), kept inside the graph, whole at 300 %, with a real minus sign;
gone when the pointer leaves a graph, and current under a still pointer while the data
scrolls (it used to show one stale reading for minutes)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, QPoint, QPointF, QRect
from PySide6.QtWidgets import QApplication
from qt_fixtures import monitor_fitted

from gpumon.ui.widgets.hover_box import place_box

pytestmark = pytest.mark.usefixtures("restore_app_look")


def point_over(panel, widget, fx: float, fy: float) -> QPointF:
    """The scene position at fractions (fx, fy) of ``widget``'s plot area."""
    vb = widget.getPlotItem().getViewBox()
    rect = vb.sceneBoundingRect()
    return QPointF(rect.left() + fx * rect.width(), rect.top() + fy * rect.height())


def move(panel, widget, fx: float, fy: float) -> QPoint:
    """What a pointer move over the graph does; the pointer's place in the panel."""
    pos = point_over(panel, widget, fx, fy)
    widget.scene().sigMouseMoved.emit(pos)
    return widget.viewport().mapTo(panel, widget.mapFromScene(pos))


@pytest.mark.parametrize("zoom", [1.0, 3.0])
def test_the_readout_floats_beside_the_pointer_inside_the_graph(qtbot, make_window, zoom):
    w = make_window()
    w.presentation.set_zoom(zoom)
    qtbot.waitUntil(lambda: w.snapshot_count >= 20, timeout=10000)  # 2 s: 0.6 s from now
    w.resize(1400, 900)  # the offscreen screen fit shrank it; the test wants this size
    qtbot.waitUntil(lambda: monitor_fitted(w), timeout=5000)
    panel = w.gpu_panel(0)
    graph = panel.memory_widget
    # a reading only the last second has data for; then where there is none yet
    for fx, fy in ((0.99, 0.9), (0.2, 0.2), (0.6, 0.5), (0.99, 0.1)):
        pointer = move(panel, graph, fx, fy)
        box = panel.readout
        assert box is not None and box.isVisible()
        text = box.text()
        if fx > 0.9:
            assert text.startswith("GPU 0 at "), text
            heading = text.splitlines()[0]
            assert "(\u2212" in heading and "-" not in heading, heading  # (−0.1 s)
            assert "Memory used " in text and "GPU util " in text
        else:
            assert text == "GPU 0: no data at this time"
        # beside the pointer: its nearest corner within a few line heights
        geo = box.geometry()
        near = max(abs(geo.center().x() - pointer.x()) - geo.width() / 2,
                   abs(geo.center().y() - pointer.y()) - geo.height() / 2)
        assert near <= 3 * box.fontMetrics().height(), (fx, fy, geo, pointer)
        # inside the graph where the graph is larger than the box, else inside the panel
        area = QRect(graph.mapTo(panel, QPoint(0, 0)), graph.size())
        inside = area if (geo.width() <= area.width() and geo.height() <= area.height()) \
            else panel.rect()
        assert inside.contains(geo), (geo, inside)
        # its text is whole: the box is as large as its labels need
        for label in (box.heading, box.values):
            assert label.width() >= label.sizeHint().width(), (zoom, label.text())
    QApplication.sendEvent(graph.viewport(), QEvent(QEvent.Type.Leave))
    assert not panel.readout.isVisible()
    assert not any(line.isVisible() for line in panel.crosshair.lines)


def test_a_still_pointer_reads_the_time_under_it_as_the_data_moves(qtbot, make_window):
    w = make_window()
    qtbot.waitUntil(lambda: w.snapshot_count >= 5, timeout=5000)
    panel = w.gpu_panel(1)
    times: list[float] = []
    panel.hovered.connect(lambda _gpu, t: times.append(t))
    move(panel, panel.util_widget, 0.99, 0.5)
    first = times[-1]
    qtbot.waitUntil(lambda: times[-1] > first + 0.15, timeout=5000)  # no pointer event came
    assert panel.readout is not None and panel.readout.text().startswith("GPU 1 at ")
    # The readout follows: it reads the same time before the newest snapshot.
    assert panel.crosshair.x is not None
    assert abs(times[-1] - (panel.x_origin_s + panel.crosshair.x)) < 1e-6


def test_the_box_flips_and_stays_inside() -> None:
    inside, outer = QRect(0, 0, 300, 200), QRect(-10, -10, 400, 400)
    assert place_box((100, 50), QPoint(10, 10), inside, outer) == QPoint(24, 24)
    assert place_box((100, 50), QPoint(290, 190), inside, outer) == QPoint(176, 126)  # flipped
    assert place_box((100, 50), QPoint(5, 195), inside, outer) == QPoint(19, 131)
    # larger than the graph: kept inside the outer rect instead
    assert place_box((350, 50), QPoint(100, 100), inside, outer).x() >= -10
