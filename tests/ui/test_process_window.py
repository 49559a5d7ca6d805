"""A process's own window as a first-class view, at 100 % and 300 %: the monitor's time axis
(unit, typographic minus), memory in the unit its size reads in, the newest numbers above
each graph and the readings beside the pointer, Esc and Ctrl+W, "Open" in the row's menu, and
a legend whose samples stay beside their labels after a zoom and a theme change."""

from __future__ import annotations

import pyqtgraph as pg
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QImage, QPainter
from PySide6.QtWidgets import QApplication
from qt_fixtures import settled
from testkit import STATUS_OK, TEST_MACHINE

from gpumon.telemetry.history.store import History
from gpumon.telemetry.model.types import GpuProcess, GpuSample, ProcessType, Snapshot
from gpumon.ui.monitor.process.view import ProcessView
from gpumon.ui.widgets.axis import TimeAxis
from gpumon.ui.window.presentation import base_font_and_palette
from gpumon.units import GIB, MIB
from tests.qt_fixtures import activate

pytestmark = pytest.mark.usefixtures("restore_app_look")
ZOOMS = [1.0, 3.0]
JOB = GpuProcess(0, 77, ProcessType.COMPUTE, 2 * GIB, name="train", user="ana",
                 command="python train.py", cpu_pct=50.0, host_rss_bytes=155 * MIB,
                 sm_util_pct=40.0, started_s=10.0)


def _zoom(factor: float) -> None:
    """The application's font at ``factor`` of the base (what Presentation.set_zoom does)."""
    font, _ = base_font_and_palette()
    zoomed = QFont(font)
    zoomed.setPointSizeF((font.pointSizeF() if font.pointSizeF() > 0 else 9.0) * factor)
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    app.setFont(zoomed)


def _view(qtbot, zoom: float, n: int = 60, *,
          closed_by_test: bool = False) -> ProcessView:
    """A shown view of JOB, listed in the last ``n - 10`` of ``n`` one-second snapshots, in
    a 1400 x 900 window (the offscreen screen is 800 x 600: the view fits itself to it)."""
    _zoom(zoom)
    history = History(capacity=600)
    for i in range(n):
        t = 1000.0 + i
        history.append(Snapshot(t, TEST_MACHINE, STATUS_OK,
                                samples=(GpuSample(0, t, mem_used_bytes=3 * GIB),),
                                processes=(JOB,) if i >= 10 else ()))
    view = ProcessView(JOB, 60, history=history)
    if not closed_by_test:  # it deletes itself on close
        qtbot.addWidget(view)
    view.resize(1400, 900)
    with qtbot.waitExposed(view):
        view.show()
    qtbot.waitUntil(lambda: all(  # laid out: each axis has the width its graph got
        w.getPlotItem().getAxis("bottom").width() > 0.5 * w.width() for w in view.plots.values()),
        timeout=3000)
    settled(lambda: [(p.size(), p.getPlotItem().getViewBox().viewRange())
                     for p in view.plots.values()])
    return view


def _drawn_labels(axis: pg.AxisItem) -> list[str]:
    """The tick labels the axis draws at its present size and range."""
    image = QImage(max(1, int(axis.width())), max(1, int(axis.height())),
                   QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        specs = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    return [text for _, _, text in specs[2]] if specs else []


@pytest.mark.parametrize("zoom", ZOOMS)
def test_the_time_axis_is_the_monitors_with_its_unit_and_minus(qtbot, zoom: float) -> None:
    view = _view(qtbot, zoom)
    for widget in view.plots.values():
        axis = widget.getPlotItem().getAxis("bottom")
        assert isinstance(axis, TimeAxis)
        labels = _drawn_labels(axis)
        assert len(labels) >= 2, labels
        assert all(s.endswith(" s") or s == "now" for s in labels), labels
        assert all("-" not in s for s in labels) and any("\u2212" in s for s in labels), labels


@pytest.mark.parametrize("zoom", ZOOMS)
def test_memory_reads_in_the_unit_of_its_size(qtbot, zoom: float) -> None:
    view = _view(qtbot, zoom)
    assert view.units["rss"] == "MiB" and view.units["gpu_mem"] == "GiB"
    rss = view.plots["rss"].getPlotItem()
    assert rss.getAxis("left").labelText == "MiB"
    x, y = rss.listDataItems()[0].getData()
    assert y[-1] == pytest.approx(155.0)  # not 0.151 (GiB)
    low, high = rss.getViewBox().viewRange()[1]
    assert low <= 0.0 and 155.0 < high <= 500.0  # from 0, the curve in the upper half
    assert "MiB" in _drawn_labels(rss.getAxis("left")) or rss.getAxis("left").labelText == "MiB"
    gpu = view.plots["gpu_mem"].getPlotItem()
    assert gpu.listDataItems()[0].getData()[1][-1] == pytest.approx(2.0)


@pytest.mark.parametrize("zoom", ZOOMS)
def test_the_newest_numbers_and_the_readings_under_the_pointer(qtbot, zoom: float) -> None:
    view = _view(qtbot, zoom)
    titles = {key: label.text() for key, label in view.titles.items()}
    assert titles["gpu_mem"].endswith("GPU 0 2.00 GiB") and titles["sm"].endswith("GPU 0 40 %")
    assert titles["cpu"].endswith("50 %") and titles["rss"].endswith("155.00 MiB")
    for label in view.titles.values():
        assert not label.is_elided()  # whole, at 300 % too
    # A real pointer over the host memory graph, 20 s before the newest snapshot.
    widget = view.plots["rss"]
    vb = widget.getPlotItem().getViewBox()
    at = widget.mapFromScene(vb.mapViewToScene(pg.Point(-20.0, 50.0)))
    qtbot.mouseMove(widget.viewport(), at)
    qtbot.waitUntil(lambda: view.hover_text != "", timeout=3000)
    lines = view.hover_text.splitlines()
    assert lines[0].startswith("\u221220") and lines[1:] == [
        "GPU 0: memory 2.00 GiB · SM 40 %", "CPU 50 % · RSS 155.00 MiB"]
    assert view.crosshairs_shown()
    tip = view.tip.geometry()
    pointer = widget.viewport().mapTo(view, at)
    near = view.fontMetrics().height()  # beside the pointer, not under it, not far off
    assert not tip.contains(pointer) and tip.adjusted(-near, -near, near, near).contains(pointer)
    assert view.rect().contains(tip)  # whole, inside the window
    view.hover_at("sm", -55.0)  # before the process was listed
    assert view.hover_text.splitlines()[1:] == ["GPU 0: memory N/A · SM N/A",
                                                 "CPU N/A · RSS N/A"]
    view.clear_hover()
    assert view.hover_text == "" and not view.tip.isVisible()


@pytest.mark.parametrize("keys", ["Esc", "Ctrl+W"])
@pytest.mark.parametrize("zoom", ZOOMS)
def test_esc_and_ctrl_w_close_it(qtbot, zoom: float, keys: str) -> None:
    view = _view(qtbot, zoom, closed_by_test=True)
    activate(qtbot, view)
    with qtbot.waitSignal(view.destroyed, timeout=3000):  # closed, and deleted on close
        if keys == "Esc":
            qtbot.keyClick(view, Qt.Key.Key_Escape)
        else:
            qtbot.keyClick(view, Qt.Key.Key_W, Qt.KeyboardModifier.ControlModifier)


@pytest.mark.parametrize("zoom", ZOOMS)
def test_the_rows_menu_opens_it(qtbot, make_window, zoom: float) -> None:
    w = make_window()
    w.presentation.set_zoom(zoom)
    model = w.process_table.process_model
    qtbot.waitUntil(lambda: model.rowCount() > 0, timeout=5000)
    p = model.process_at(0)
    menu = w.process_actions.menu_for(p)
    assert [a.text() for a in menu.actions()] == ["Open\tEnter"]  # simulated: no signals
    assert not w.findChildren(ProcessView)
    menu.actions()[0].trigger()
    views = w.findChildren(ProcessView)
    assert len(views) == 1 and views[0].trace.pid == p.pid
    assert views[0].windowTitle() == f"Process {p.pid} [SIMULATED]"
    views[0].close()


def _legend_offsets(view: ProcessView) -> list[tuple[float, float]]:
    """(gap from each legend sample to its label's text, label centre minus sample centre)."""
    out = []
    for key in ("gpu_mem", "sm"):
        legend = view.plots[key].getPlotItem().legend
        assert legend is not None and legend.items
        for sample, label in legend.items:
            s = sample.mapRectToScene(sample.boundingRect())
            t = label.item.mapRectToScene(label.item.boundingRect())
            out.append((t.left() - s.right(), t.center().y() - s.center().y()))
    return out


def test_legend_samples_stay_beside_their_labels_after_300_and_dark(qtbot, make_window):
    w = make_window()
    model = w.process_table.process_model
    qtbot.waitUntil(lambda: model.rowCount() > 0 and w.snapshot_count >= 3, timeout=5000)
    view = w.open_process_view(w.process_table.proxy.index(0, 0))
    qtbot.waitUntil(lambda: all(v.getPlotItem().legend.items for k, v in view.plots.items()
                                if k in ("gpu_mem", "sm")), timeout=5000)
    before = _legend_offsets(view)
    assert all(0 <= gap < 12 and abs(dy) < 2 for gap, dy in before), before
    w.presentation.set_zoom(3.0)
    QApplication.processEvents()
    w.presentation.set_zoom(1.0)
    w.presentation.set_theme("dark")
    QApplication.processEvents()
    after = _legend_offsets(view)
    assert all(0 <= gap < 12 and abs(dy) < 2 for gap, dy in after), after
    legend = view.plots["sm"].getPlotItem().legend
    assert legend.geometry().width() < 1.2 * max(  # not the 300 % box's width
        label.item.boundingRect().width() + 30 for _, label in legend.items)
    view.close()


def test_the_row_activation_slot_takes_the_rows_model_index() -> None:
    """The table's ``activated(QModelIndex)`` opens the view through a slot of that
    signature (a slot declared for other arguments is a different, unused method)."""
    from gpumon.ui.window.main_window import MainWindow

    meta = MainWindow.staticMetaObject
    slots = {meta.method(i).methodSignature().data().decode()
             for i in range(meta.methodOffset(), meta.methodCount())}
    assert "open_process_view(QModelIndex)" in slots
