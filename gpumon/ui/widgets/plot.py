"""A light plot: a ViewBox with a left and a bottom axis, and the part of pyqtgraph's
PlotItem API that gpumon uses (plot, addItem, removeItem, items, listDataItems, getAxis,
getViewBox, setXRange, setYRange, enableAutoRange, setLabel, showGrid, addLegend, legend,
setDownsampling, setClipToView, setXLink).

Why not ``pg.PlotItem``: each one builds its "Plot Options" context-menu widgets and four
axes (two of them hidden), with labels laid out as HTML several times; at start-up that was
~7 ms a plot here, 57 ms of the ~100 ms it took to build 4 GPU panels (8 plots). A
``LitePlot`` builds in about a fifth of that. It has no context menu, no auto-range button,
no log, FFT or averaging modes: a GPU panel uses none of them.

    widget = LitePlotWidget(background="w")
    plot = widget.getPlotItem()
    curve = plot.plot(x, y, pen="#1f77b4", name="used")
"""

from __future__ import annotations

from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QPainter, QPaintEvent, QPolygonF, QResizeEvent
from PySide6.QtWidgets import QGraphicsGridLayout, QGraphicsItem, QWidget

from gpumon.ui.widgets.axis import ThinAxis
from gpumon.ui.widgets.theme import plot_defaults

pg.setConfigOptions(**plot_defaults())  # the window's theme, chosen before pyqtgraph loaded

DataItem = pg.PlotDataItem | pg.PlotCurveItem  # what listDataItems lists and the legend shows


class CurveSample(pg.ItemSample):
    """A legend sample that also shows a PlotCurveItem's fill: pyqtgraph's ItemSample looks
    for PlotDataItem's ``fillBrush`` option, and a PlotCurveItem calls it ``brush``."""

    def paint(self, p: QPainter, *args: Any) -> None:
        opts = self.item.opts
        if (isinstance(self.item, pg.PlotCurveItem) and self.item.isVisible()
                and opts.get("fillLevel") is not None and opts.get("brush") is not None):
            p.setBrush(pg.mkBrush(opts["brush"]))
            p.setPen(pg.mkPen(opts["pen"]))
            p.drawPolygon(QPolygonF([QPointF(2, 18), QPointF(18, 2), QPointF(18, 18)]))
        super().paint(p, *args)


def fit_legend(legend: pg.LegendItem) -> None:
    """Lay ``legend`` out again at its labels' present size, after their font changed.
    ``LegendItem.updateSize`` sums its items' current sizes, which the last layout gave
    them: after 300 % and back the rows kept their 300 % height, and each label sat 12 px
    above its sample (and the box stayed twice as wide)."""
    for sample, label in legend.items:
        for item in (sample, label):
            item.resize(item.effectiveSizeHint(Qt.SizeHint.MinimumSize))
    legend.updateSize()


class LitePlot(pg.GraphicsWidget):
    """A ViewBox framed by a left and a bottom axis (ThinAxis: labels never overlap, at any
    zoom), laid out like a PlotItem; ``bottom`` is the bottom axis' class."""

    def __init__(self, bottom: type[ThinAxis] = ThinAxis) -> None:
        super().__init__()
        self.vb = pg.ViewBox(enableMenu=False)
        self.axes: dict[str, pg.AxisItem] = {"left": ThinAxis("left"),
                                             "bottom": bottom("bottom")}
        layout = QGraphicsGridLayout()
        layout.setContentsMargins(1, 1, 1, 1)
        layout.setHorizontalSpacing(0)
        layout.setVerticalSpacing(0)
        layout.addItem(self.axes["left"], 0, 0)
        layout.addItem(self.vb, 0, 1)
        layout.addItem(self.axes["bottom"], 1, 1)
        layout.setRowStretchFactor(0, 100)
        layout.setColumnStretchFactor(1, 100)
        self.setLayout(layout)
        for axis in self.axes.values():
            # Labels are plain text here ("GiB", "%"), so no SI prefix: with it on, every
            # range change re-set the label's HTML (~18 times an axis while building).
            axis.enableAutoSIPrefix(False)
            axis.linkToView(self.vb)
            axis.setZValue(0.5)  # above the ViewBox: the grid is drawn over the curves
        self.items: list[QGraphicsItem] = []
        self.legend: pg.LegendItem | None = None
        self._downsample: tuple[int | None, bool, str] = (None, False, "peak")
        self._clip_to_view = False

    # -- what PlotItem offers -----------------------------------------------------------------
    def getViewBox(self) -> pg.ViewBox:
        return self.vb

    def getAxis(self, name: str) -> pg.AxisItem | None:
        """The axis on side ``name``; None for "right" and "top", which a LitePlot lacks."""
        return self.axes.get(name)

    def plot(self, *args: Any, **kwargs: Any) -> pg.PlotDataItem:
        """A PlotDataItem of ``args``/``kwargs`` (as ``pg.PlotDataItem`` takes them), added."""
        item = pg.PlotDataItem(*args, **kwargs)
        self.addItem(item)
        return item

    def addItem(self, item: QGraphicsItem, ignoreBounds: bool = False) -> None:
        if item in self.items:
            return
        self.items.append(item)
        self.vb.addItem(item, ignoreBounds=ignoreBounds)
        if isinstance(item, pg.PlotDataItem):
            ds, auto, method = self._downsample
            item.setDownsampling(ds, auto, method)
            item.setClipToView(self._clip_to_view)
        if isinstance(item, DataItem) and self.legend is not None and item.name():
            self.legend.addItem(item, item.name())

    def removeItem(self, item: QGraphicsItem) -> None:
        if item not in self.items:
            return
        self.items.remove(item)
        self.vb.removeItem(item)
        if self.legend is not None and isinstance(item, DataItem):
            self.legend.removeItem(item)

    def listDataItems(self) -> list[pg.PlotDataItem | pg.PlotCurveItem]:
        """The curves (PlotDataItems and PlotCurveItems), in the order they were added."""
        return [i for i in self.items if isinstance(i, DataItem)]

    def addLegend(self, offset: tuple[float, float] = (30, 30),
                  **kwargs: Any) -> pg.LegendItem:
        """A legend in the view's corner; curves added later with a name appear in it."""
        if self.legend is None:
            kwargs.setdefault("sampleType", CurveSample)
            self.legend = pg.LegendItem(offset=offset, **kwargs)
            self.legend.setParentItem(self.vb)
        return self.legend

    def setLabel(self, side: str, text: str | None = None, units: str | None = None,
                 **style: Any) -> None:
        axis = self.axes[side]
        axis.setLabel(text=text, units=units, **style)
        axis.showLabel(bool(text or units))

    def showGrid(self, x: bool = False, y: bool = False, alpha: float = 0.3) -> None:
        level = int(max(0.0, min(1.0, alpha)) * 255)
        self.axes["bottom"].setGrid(level if x else False)
        self.axes["left"].setGrid(level if y else False)

    def setDownsampling(self, ds: int | None = None, auto: bool = False,
                        mode: str = "peak") -> None:
        """For the PlotDataItems, now and later (PlotCurveItems draw what they are given)."""
        self._downsample = (ds, auto, mode)
        for item in self.listDataItems():
            if isinstance(item, pg.PlotDataItem):
                item.setDownsampling(ds, auto, mode)

    def setClipToView(self, clip: bool) -> None:
        self._clip_to_view = clip
        for item in self.listDataItems():
            if isinstance(item, pg.PlotDataItem):
                item.setClipToView(clip)

    def setXRange(self, *args: Any, **kwargs: Any) -> None:
        self.vb.setXRange(*args, **kwargs)

    def setYRange(self, *args: Any, **kwargs: Any) -> None:
        self.vb.setYRange(*args, **kwargs)

    def enableAutoRange(self, *args: Any, **kwargs: Any) -> None:
        self.vb.enableAutoRange(*args, **kwargs)

    def setXLink(self, other: LitePlot) -> None:
        self.vb.setXLink(other.vb)


class LitePlotWidget(pg.GraphicsView):
    """A GraphicsView showing one LitePlot; ``getPlotItem()`` as on a pg.PlotWidget.

    ``veiled``: paint only the background (``reveal.py`` veils the graphs of a page that
    comes into view and unveils them over the next event-loop turns, so that the frame that
    answers a key paints no graph), and lay the plot out for a new size only when unveiled:
    in the frame that answers a zoom step the page shrinks under the taller header, and
    fitting 16 plots to it (their axes and views) took ~15 ms of that frame's ~37 ms."""

    def __init__(self, parent: QWidget | None = None, background: str = "default",
                 bottom: type[ThinAxis] = ThinAxis) -> None:
        super().__init__(parent, background=background)
        self.plot_item = LitePlot(bottom)
        self.setCentralItem(self.plot_item)
        self.veiled = False
        self.resized_veiled = False  # resized while veiled: laid out when unveiled

    def set_veiled(self, veiled: bool) -> None:
        if veiled != self.veiled:
            self.veiled = veiled
            if not veiled and self.resized_veiled:
                self.resized_veiled = False
                super().resizeEvent(QResizeEvent(self.size(), self.size()))
            self.viewport().update()

    def resizeEvent(self, event: QResizeEvent | None) -> None:
        if getattr(self, "veiled", False):  # (pyqtgraph calls it before __init__ is done)
            self.resized_veiled = True
            return
        super().resizeEvent(event)

    def paintEvent(self, event: QPaintEvent) -> None:
        if self.veiled:
            painter = QPainter(self.viewport())
            painter.fillRect(event.rect(), self.backgroundBrush())
            painter.end()
            return
        super().paintEvent(event)

    def getPlotItem(self) -> LitePlot:
        return self.plot_item
