"""``LiteCurve``: a PlotCurveItem whose per-tick ``setData(x, y)`` skips what a scrolling
graph does not need.

pyqtgraph's ``PlotCurveItem.setData`` parses its arguments, then calls
``prepareGeometryChange()``, which makes Qt ask for the new ``boundingRect()`` at once: the
data's min and max (``nanmin``/``nanmax`` over x and y) and the pixel size, ~0.1 ms a curve,
on every tick for every curve. A GPU panel's curves always span the plot (a window's worth
of samples, clipped by the ViewBox), so a LiteCurve's bounding rect is the view's rect,
which changes only with the range or the size (``viewTransformChanged``), and ``setData``
with just the arrays keeps it. ``dataBounds`` (what auto-range reads) still follows the data.

Any other call (pens, fill, names, keyword arguments besides ``connect`` and
``skipFiniteCheck``) goes through ``PlotCurveItem.setData`` unchanged.

Its ``paint`` draws the line as a polyline and the fill as polygons of 50 points, per run
of finite points, made straight from the arrays (``QPolygonF`` filled through numpy), where
pyqtgraph builds a ``QPainterPath`` for the line and one for each 50-point chunk of the
fill. New data comes every second, so those paths were built again for every frame. A plot
1,300 px wide with one curve over its fill rendered in 0.31 ms instead of 0.56 (60 points),
0.52 instead of 0.87 (300), 2.4 instead of 3.2 (3,600); ``bench_drawing.py --grid`` has the
whole grid. The pixels are pyqtgraph's (``test_curve.py``).
What the polygons do not cover (OpenGL, step mode, a shadow pen, a fill outline, a
composition mode, export) is pyqtgraph's own paint.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from pyqtgraph import functions as fn
from pyqtgraph.Qt import OpenGLHelpers
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QPainter, QPolygonF
from PySide6.QtWidgets import QStyleOptionGraphicsItem, QWidget

from gpumon.telemetry.history.decimate import anchored_peak_decimate

FAST_KEYS = frozenset({"connect", "skipFiniteCheck"})
FILL_CHUNK = 50  # points in each polygon of a fill, as pyqtgraph chunks its fill paths


class LiteCurve(pg.PlotCurveItem):
    """A PlotCurveItem bounded by its ViewBox's visible rect, with a lean ``setData`` and
    ``paint``."""

    _polygons: tuple[float | None, list[tuple[QPolygonF, list[QPolygonF]]]] | None = None

    def setData(self, *args: Any, **kwargs: Any) -> None:
        """``setData(x, y[, connect=..., skipFiniteCheck=...])`` takes the fast path;
        anything else is ``PlotCurveItem.setData``."""
        if len(args) != 2 or not FAST_KEYS.issuperset(kwargs):
            super().setData(*args, **kwargs)
            return
        x = np.asarray(args[0], dtype=float)
        y = np.asarray(args[1], dtype=float)
        if x.ndim != 1 or x.shape != y.shape:
            raise ValueError(f"x and y must be 1-D arrays of one length, got {x.shape} "
                             f"and {y.shape}")
        self.xData, self.yData = x, y
        self.opts.update(kwargs)
        self._boundsCache = [None, None]  # dataBounds follows the data; boundingRect does not
        self.path = None
        self.fillPath = None
        self._fillPathList = None
        self._mouseShape = None
        self._lineSegmentsRendered = False
        self._polygons = None
        self.informViewBoundsChanged()  # auto-range, where it is on, sees the new data
        self.update()
        self.sigPlotChanged.emit(self)

    def paint(self, p: QPainter, opt: QStyleOptionGraphicsItem, widget: QWidget | None) -> None:
        """The line and its fill as polygons (module docstring), where they can be."""
        if not self._polygons_draw_it(widget):
            super().paint(p, opt, widget)
            return
        polygons = self._polygons_of_data()
        p.setRenderHint(QPainter.RenderHint.Antialiasing, bool(self.opts["antialias"]))
        if self._fills():
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(self.opts["brush"])
            for _line, fills in polygons:
                for fill in fills:
                    p.drawPolygon(fill)
        pen = self.opts["pen"]
        if pen is None or pen.style() == Qt.PenStyle.NoPen:
            return
        p.setPen(pen)
        p.setBrush(Qt.BrushStyle.NoBrush)
        for line, _fill in polygons:
            p.drawPolyline(line)

    def _fills(self) -> bool:
        brush = self.opts["brush"]
        return (self.opts["fillLevel"] is not None and brush is not None
                and brush.style() != Qt.BrushStyle.NoBrush)

    def _polygons_draw_it(self, widget: QWidget | None) -> bool:
        """Whether this curve is drawn by ``paint``'s polygons, not pyqtgraph's paths."""
        opts = self.opts
        return (self.xData is not None and len(self.xData) > 0
                and self._exportOpts is False and not opts["stepMode"]
                and opts["connect"] == "finite" and opts["shadowPen"] is None
                and opts["compositionMode"] is None and not opts["fillOutline"]
                and isinstance(opts["fillLevel"], (int, float, type(None)))
                and not isinstance(widget, OpenGLHelpers.GraphicsViewGLWidget))

    def _polygons_of_data(self) -> list[tuple[QPolygonF, list[QPolygonF]]]:
        """(line, fill's polygons) per run of finite points, made once per ``setData`` and fill
        level (None: no fill)."""
        level = self.opts["fillLevel"] if self._fills() else None
        if self._polygons is not None and self._polygons[0] == level:
            return self._polygons[1]
        x, y = self.xData, self.yData
        assert x is not None and y is not None
        polygons = [(_polygon(x[a:b], y[a:b]), _fill(x[a:b], y[a:b], level))
                    for a, b in _finite_runs(x, y, bool(self.opts["skipFiniteCheck"]))]
        self._polygons = (level, polygons)
        return polygons

    def updateData(self, *args: Any, **kwargs: Any) -> None:
        """pyqtgraph's ``setData``: the polygons are made again from its data too."""
        self._polygons = None
        super().updateData(*args, **kwargs)

    def boundingRect(self) -> QRectF:
        """The ViewBox's visible rect (in data coordinates), where the curve is drawn and
        clipped; the data's own bounds when the curve is in no ViewBox."""
        rect: QRectF | None = getattr(self, "_boundingRect", None)  # set by PlotCurveItem
        if rect is None:
            view = self.getViewBox()
            if not isinstance(view, pg.ViewBox):
                return super().boundingRect()
            rect = self._boundingRect = view.viewRect()
        return rect

    def viewRangeChanged(self) -> None:
        """A new range is a new bounding rect at once (the view's transform follows only at
        its next paint, and ``viewTransformChanged`` then)."""
        super().viewRangeChanged()
        self.invalidateBounds()
        self.prepareGeometryChange()


def _finite_runs(x: np.ndarray, y: np.ndarray, all_finite: bool) -> list[tuple[int, int]]:
    """[start, end) of each run of finite points: ``connect="finite"`` joins each run and
    leaves a gap at every NaN (one run when the caller knows all are finite)."""
    if all_finite:
        return [(0, len(x))]
    finite = np.isfinite(x) & np.isfinite(y)
    edges = np.flatnonzero(np.diff(np.concatenate(([0], finite.view(np.int8), [0]))))
    return [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2], strict=True)]


def _polygon(x: np.ndarray, y: np.ndarray, tail: tuple[tuple[float, float], ...] = ()
             ) -> QPolygonF:
    """The points, then ``tail``, as a QPolygonF filled in place through numpy."""
    n = len(x)
    polygon = fn.create_qpolygonf(n + len(tail))
    points = fn.ndarray_from_qpolygonf(polygon)
    points[:n, 0] = x
    points[:n, 1] = y
    if tail:
        points[n:] = tail
    return polygon


def _fill(x: np.ndarray, y: np.ndarray, level: float | None) -> list[QPolygonF]:
    """The area between the points and ``level``, in polygons of ``FILL_CHUNK`` points that
    share their edge points, as pyqtgraph chunks its fill paths: Qt's rasterizer fills many
    narrow polygons far faster than one wide one (1,400 peak-decimated points: 1.0 ms
    against 13 ms). No polygon without a level or for fewer than two points."""
    polygons: list[QPolygonF] = []
    if level is None:
        return polygons
    start = 0
    while start < len(x) - 1:
        end = min(len(x), start + FILL_CHUNK)
        xs, ys = x[start:end], y[start:end]
        polygons.append(_polygon(xs, ys, ((xs[-1], level), (xs[0], level))))
        start = end - 1  # the last point begins the next polygon
    return polygons


def set_series(curve: pg.PlotCurveItem, t: np.ndarray, y: np.ndarray, t0: float,
               block_s: float) -> None:
    """Show ``y`` at absolute times ``t`` on ``curve``, x relative to ``t0`` (the newest
    sample's time), peak-decimated in blocks of ``block_s`` seconds anchored to absolute time
    (one block a pixel column)."""
    if len(t) == 0:
        curve.setData(np.empty(0), np.empty(0))
        return
    t, y = anchored_peak_decimate(np.asarray(t, dtype=float), np.asarray(y, dtype=float),
                                  block_s)
    curve.setData(t - t0, y, connect="finite", skipFiniteCheck=bool(np.isfinite(y).all()))
