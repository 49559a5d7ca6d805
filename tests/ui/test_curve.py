"""LiteCurve: the panels' curve item keeps its bounding rect (the view's rect) across
setData, still shows the new data, and auto-range still follows the data."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg

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
