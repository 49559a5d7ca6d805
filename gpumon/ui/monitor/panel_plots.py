"""How a GPU panel's graphs are made: a LitePlot with a time axis ("−60 s" … "now"), a grid
of major and minor ticks, axes cached as pixmaps, and curves with 1 px pens (the memory one
over an opaque fill). See panel.py for why each choice keeps a redraw cheap."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGraphicsItem, QSizePolicy

from gpumon.ui.widgets.axis import TimeAxis
from gpumon.ui.widgets.curve import LiteCurve
from gpumon.ui.widgets.plot import LitePlot, LitePlotWidget
from gpumon.ui.widgets.plot_style import FILL_ATTR, opaque_fill

CURVE_WIDTH = 1.0  # a 1 px line is the raster engine's fast path; 1.6 px cost ~25% of a frame
FILL_ALPHA = 0.25  # the memory fill: its colour at this opacity over the plot's background
PLOT_MIN_HEIGHT = 110


def make_plot(y_label: str) -> LitePlotWidget:
    # A LitePlot, not a pg.PlotItem: no options menu, no hidden axes (plot.py says why).
    w = LitePlotWidget(background="w", bottom=TimeAxis)  # "-60 s" … "now": the unit shows
    w.setMinimumHeight(PLOT_MIN_HEIGHT)
    w.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
    item = w.getPlotItem()
    item.getViewBox().setMouseEnabled(x=False, y=False)
    item.showGrid(x=True, y=True, alpha=0.25)
    item.setLabel("left", y_label)
    for side in ("left", "bottom"):
        axis = item.getAxis(side)
        assert axis is not None  # a LitePlot has these two
        if side == "bottom":
            axis.setStyle(tickTextOffset=2)
        axis.setStyle(maxTickLevel=1)  # grid lines at major and minor ticks, not sub-minor
        # The axis draws the grid across the whole plot, so every curve redraw used to
        # replay its picture (ticks, text, grid: ~0.7 ms an axis here). Cached as a pixmap,
        # it is re-rendered only when the axis itself changes (range, size, style).
        axis.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
    return w


def add_curve(plot: LitePlot, color: str, name: str, width: float = CURVE_WIDTH,
           style: Qt.PenStyle = Qt.PenStyle.SolidLine, fill: bool = False) -> pg.PlotCurveItem:
    pen = pg.mkPen(color, width=width, style=style)
    kwargs: dict[str, object] = {"pen": pen, "name": name, "connect": "finite"}
    if fill:
        kwargs.update(fillLevel=0.0, brush=pg.mkBrush(opaque_fill(color, FILL_ALPHA, "#ffffff")))
    curve = LiteCurve(**kwargs)
    plot.addItem(curve)
    if fill:
        setattr(curve, FILL_ATTR, (color, FILL_ALPHA))
    return curve
