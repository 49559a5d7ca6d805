"""LiteCurve: the panels' curve item keeps its bounding rect (the view's rect) across
setData, still shows the new data, auto-range still follows the data, and its polygons draw
what pyqtgraph's paths draw."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtGui import QColor, QImage

from gpumon.telemetry.model.types import GpuInfo
from gpumon.ui.monitor.panel import GpuPanel
from gpumon.ui.widgets.curve import LiteCurve
from gpumon.ui.widgets.plot import LitePlotWidget


def _plot(qtbot):
    widget = LitePlotWidget()
    qtbot.addWidget(widget)
    widget.resize(400, 200)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def test_set_data_keeps_the_view_rect_as_bounds(qtbot) -> None:
    widget = _plot(qtbot)
    plot = widget.getPlotItem()
    plot.setXRange(-10, 0, padding=0)
    plot.setYRange(0, 100, padding=0)
    curve = LiteCurve(pen="#000")
    plot.addItem(curve)
    curve.setData(np.array([-5.0, -1.0]), np.array([10.0, 20.0]), connect="finite")
    view = plot.getViewBox().viewRect()
    assert curve.boundingRect() == view
    curve.setData(np.array([-4.0, 0.0]), np.array([30.0, np.nan]), connect="finite",
                  skipFiniteCheck=False)
    assert curve.boundingRect() == view  # unchanged by the data
    x, y = curve.getData()
    assert list(x) == [-4.0, 0.0] and y[0] == 30.0 and np.isnan(y[1])
    assert curve.dataBounds(1) == (30.0, 30.0)  # the data's own bounds, NaN left out
    plot.setXRange(-20, 0, padding=0)  # a new range: new bounds
    assert curve.boundingRect() == plot.getViewBox().viewRect() != view


def test_other_calls_go_through_plot_curve_item(qtbot) -> None:
    curve = LiteCurve()
    curve.setData([0.0, 1.0], [2.0, 3.0], pen="#f00", name="x")  # keyword beyond the fast ones
    assert curve.name() == "x" and curve.opts["pen"].color().name() == "#ff0000"
    assert curve.boundingRect().height() == 1.0  # in no ViewBox: the data's bounds
    try:
        curve.setData(np.zeros(2), np.zeros(3))
    except ValueError as err:
        assert "one length" in str(err)
    else:
        raise AssertionError("mismatched arrays accepted")


def test_auto_range_follows_the_data(qtbot) -> None:
    widget = _plot(qtbot)
    plot = widget.getPlotItem()
    plot.enableAutoRange(y=True)
    curve = LiteCurve(pen="#000")
    plot.addItem(curve)
    curve.setData(np.array([0.0, 1.0]), np.array([0.0, 5.0]))
    qtbot.waitUntil(lambda: plot.getViewBox().viewRange()[1][1] >= 5.0)
    curve.setData(np.array([0.0, 1.0]), np.array([0.0, 50.0]))
    qtbot.waitUntil(lambda: plot.getViewBox().viewRange()[1][1] >= 50.0)


def test_panel_curves_are_lite_curves(qtbot) -> None:
    info = GpuInfo(index=0, name="GPU", uuid="GPU-0", pci_bus_id="0", mem_total_bytes=2**30)
    panel = GpuPanel(info, window_s=60)
    qtbot.addWidget(panel)
    curves = panel.memory_plot.listDataItems() + panel.util_plot.listDataItems()
    assert curves and all(isinstance(c, LiteCurve) for c in curves)
    assert all(isinstance(c, pg.PlotCurveItem) for c in curves)


def _pixels(qtbot, curve_type: type, x: np.ndarray, y: np.ndarray, **kwargs) -> QImage:
    widget = _plot(qtbot)
    plot = widget.getPlotItem()
    plot.setXRange(float(x[0]), float(x[-1]), padding=0)
    plot.setYRange(0, 100, padding=0)
    curve = curve_type(pen=pg.mkPen("#1f77b4", width=1), connect="finite", **kwargs)
    plot.addItem(curve)
    curve.setData(x, y, connect="finite", skipFiniteCheck=bool(np.isfinite(y).all()))
    return widget.grab().toImage()


@pytest.mark.parametrize("fill", [False, True], ids=["line", "over its fill"])
@pytest.mark.parametrize("gaps", [False, True], ids=["finite", "with gaps"])
def test_its_polygons_draw_the_pixels_pyqtgraph_draws(qtbot, fill: bool, gaps: bool) -> None:
    """The polygons ``paint`` draws give pyqtgraph's own pixels: line, fill, NaN gaps, and a
    lone point between two gaps (drawn by neither). Where a run ends before a gap, Qt's
    polyline draws its last point and pyqtgraph's path stops a pixel short: at most one pixel
    a gap differs."""
    rng = np.random.default_rng(0)
    x = np.arange(-300.0, 0.0)
    y = 50 + 30 * np.sin(x / 7) + rng.random(300) * 10
    if gaps:
        y[[40, 41, 42, 100, 102, 250]] = np.nan
    kwargs = {"fillLevel": 0.0, "brush": pg.mkBrush("#c0d8ec")} if fill else {}
    ours = _pixels(qtbot, LiteCurve, x, y, **kwargs)
    theirs = _pixels(qtbot, pg.PlotCurveItem, x, y, **kwargs)
    assert ours.size() == theirs.size()
    differ = [(px, py) for px in range(ours.width()) for py in range(ours.height())
              if ours.pixel(px, py) != theirs.pixel(px, py)]
    assert len(differ) <= (4 if gaps else 0), differ


def test_new_data_and_a_new_fill_level_are_drawn(qtbot) -> None:
    """The polygons made for one frame are made again for new data and a new fill level."""
    widget = _plot(qtbot)
    plot = widget.getPlotItem()
    plot.setXRange(0, 1, padding=0)
    plot.setYRange(0, 100, padding=0)
    curve = LiteCurve(pen="#000", fillLevel=0.0, brush="#f00", connect="finite")
    plot.addItem(curve)
    curve.setData(np.array([0.0, 1.0]), np.array([10.0, 10.0]))
    low = widget.grab().toImage()
    curve.setData(np.array([0.0, 1.0]), np.array([90.0, 90.0]))
    high = widget.grab().toImage()
    curve.setFillLevel(50.0)
    level = widget.grab().toImage()
    red = [sum(QColor(img.pixel(px, py)).name() == "#ff0000"
               for px in range(0, img.width(), 4) for py in range(0, img.height(), 4))
           for img in (low, high, level)]
    assert red[0] < red[2] < red[1], red
