"""Strip-chart drawing for a GPU graph: keep what was drawn, slide it, paint only the new edge.

A GPU graph's time axis only slides: between two ticks every curve moves left by the time
that passed and new samples appear at the right edge. A ``StripChart`` sits in a plot's
ViewBox, under everything else in it, and paints the plot's curves (every PlotCurveItem added
with ``LitePlot.addItem``, filled ones included) from an image of the curves' area kept in
device pixels. The curves stay in the plot, for the legend, auto-range, hover and the SVG
export, but do not paint themselves (``ItemHasNoContents``). Each tick:

- ``advance(t_ref)`` moves the graph's time origin by whole device pixels (rounded, so it
  lies within half a device pixel of ``t_ref``; sub-pixel slides add up until they make a
  pixel) and returns it: the curves' x data must be relative to it (``set_series``);
- at the next paint the image is shifted left by those pixels and only the columns whose
  curves changed are cleared and painted again: the new strip at the right edge, and back to
  the last point that differs from what was drawn (the newest block, the newest sample,
  a gap, a curve that shrank), found by comparing the new points with the drawn ones.

Anything else that changes the picture repaints all of it: a new size, device pixel ratio
or position within a pixel, x or y range (zoom, time window, a new memory total), a curve's
pen, brush, fill level, visibility or z, a curve added or removed, the history replaced (the
points differ from the first one compared), a shift wider than the image. The axes draw the
grid over the ViewBox (their own cached pixmaps), and markers, the crosshair and the legend are
other items above the StripChart, so none of them needs the image redrawn.

The leftmost block (one pixel) may differ from a full redraw: there the history drops samples
tick by tick, and the strip chart keeps the block as it was drawn whole (``GUARD_PX``).

Exports draw the curves themselves: an image export or a ``scene().render()`` paints them
through this item without the cache, the SVG export asks each curve (``generateSvg``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QImage, QPainter, QPen, QTransform
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem, QWidget

from gpumon.telemetry.decimate import anchored_peak_decimate
from gpumon.ui.monitor.curve import LiteCurve

GUARD_PX = 3.0  # logical pixels at the left edge not compared (the history drops samples there)
EPS_S = 1e-6  # two points within this many seconds are the same point
NO_CONTENTS = QGraphicsItem.GraphicsItemFlag.ItemHasNoContents
# Off: the curves paint themselves, as plain PlotCurveItems. Off by default because it did
# not pay here: the curves are already cheap to paint (1 px aliased pens, an opaque fill,
# two points a pixel column), while a strip chart still copies the whole plot area to the
# screen each tick and adds its Python work. Measured in the same runs (offscreen, CPU time
# per tick of the drawing, benchmarks/bench_drawing.py --grid): 8 GPUs, 5-minute window,
# 16.3 ms with strip charts, 14.1 ms without; under Xvfb at 1 s (bench_cpu.py --peers), 8
# GPUs on the Monitor tab, 1.9-2.1 % of a core with, 1.7 % without.
_enabled = False


def set_strip_charts(enabled: bool) -> bool:
    """Turn strip-chart drawing on or off for the StripCharts made from now on; returns the
    setting it replaces (tests and benchmarks compare the two)."""
    global _enabled
    before, _enabled = _enabled, enabled
    return before


def set_series(curve: pg.PlotCurveItem, t: np.ndarray, y: np.ndarray, t0: float,
               block_s: float) -> None:
    """Show ``y`` at absolute times ``t`` on ``curve``, x relative to ``t0`` (the graph's
    origin from ``StripChart.advance``), peak-decimated in blocks of ``block_s`` seconds
    anchored to absolute time (one block a pixel column)."""
    if len(t) == 0:
        curve.setData(np.empty(0), np.empty(0))
        return
    t, y = anchored_peak_decimate(np.asarray(t, dtype=float), np.asarray(y, dtype=float),
                                  block_s)
    curve.setData(t - t0, y, connect="finite", skipFiniteCheck=bool(np.isfinite(y).all()))


def changed_from(old: tuple[np.ndarray, np.ndarray], new: tuple[np.ndarray, np.ndarray],
                 shift_s: float, x_from: float) -> float | None:
    """The x (new coordinates) from which curve ``new`` may look different from ``old`` moved
    left by ``shift_s``, comparing the points right of ``x_from`` only; None when it looks
    the same there, -inf when it differs from the first point compared (redraw it all)."""
    (ox, oy), (nx, ny) = old, new
    i0 = int(np.searchsorted(nx, x_from))
    if i0 >= len(nx):  # nothing to compare: the new curve lies left of x_from or is empty
        return None if len(ox) == 0 or ox[-1] - shift_s < x_from else -math.inf
    ox = ox - shift_s
    m = int(np.searchsorted(ox, nx[i0] - EPS_S))
    n = min(len(ox) - m, len(nx) - i0)
    a, b = oy[m:m + n], ny[i0:i0 + n]
    same = (np.abs(ox[m:m + n] - nx[i0:i0 + n]) <= EPS_S) & ((a == b) | (np.isnan(a) & np.isnan(b)))
    bad = np.flatnonzero(~same)
    j = i0 + (int(bad[0]) if len(bad) else n)
    if j == i0:
        return -math.inf
    if j == len(nx) and m + n == len(ox):
        return None
    return float(nx[j - 1])


def _signature(curve: pg.PlotCurveItem) -> tuple[Any, ...]:
    """What of a curve's look, besides its points, the image depends on."""
    o = curve.opts
    pen, brush = o.get("pen"), o.get("brush")
    shadow = o.get("shadowPen")
    return (id(curve), curve.isVisible(), curve.zValue(), curve.opacity(),
            QPen(pen) if isinstance(pen, QPen) else pen,
            QPen(shadow) if isinstance(shadow, QPen) else shadow,
            QBrush(brush) if isinstance(brush, QBrush) else brush,
            o.get("fillLevel"), o.get("fillOutline"), o.get("antialias"), o.get("stepMode"),
            o.get("compositionMode"), str(o.get("connect")))


class StripChart(pg.GraphicsObject):
    """Paints the curves of ``plot`` from a sliding image (see the module doc)."""

    def __init__(self, plot: Any) -> None:
        super().__init__()
        self._vb: pg.ViewBox = plot.getViewBox()
        self.setParentItem(self._vb)
        self.setZValue(-1e5)  # above the ViewBox's background, below its items
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        self.enabled = _enabled
        self._curves: list[pg.PlotCurveItem] = []
        self._image: QImage | None = None  # a ring of columns: the graph's left edge at
        self._offset = 0  # this column, its right edge just before it
        self._fill = QColor(0, 0, 0, 0)  # the background the image is painted on
        self._tails: dict[int, pg.PlotCurveItem] = {}  # id(curve) -> the curve's newest part
        self._key: tuple[Any, ...] | None = None
        self._drawn: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # id(curve) -> its points
        self._t0: float | None = None  # absolute time of x = 0, the image's right edge
        self._pps = 0.0  # device pixels per second when _t0 was set
        self._pending = 0  # whole device pixels slid since the image was painted
        self._pending_s = 0.0  # the same in seconds
        self.full_renders = 0  # counts, read by tests and benchmarks
        self.strip_renders = 0
        self._vb.sigResized.connect(self._resized)
        plot.strip = self
        for item in plot.items:
            self.adopt(item)

    # -- what the plot and the panel call ---------------------------------------------------
    def adopt(self, item: QGraphicsItem) -> None:
        """Paint ``item`` from the image if it is a curve directly in the ViewBox."""
        if (self.enabled and isinstance(item, pg.PlotCurveItem)
                and item.parentItem() is self._vb.childGroup and item not in self._curves):
            self._curves.append(item)
            item.setFlag(NO_CONTENTS, True)
            # Qt drops the update() of an item without contents: new points repaint this one
            item.sigPlotChanged.connect(self._curve_changed)
            self.invalidate()

    def release(self, item: QGraphicsItem) -> None:
        """``item`` left the plot: it paints itself again wherever it goes."""
        if isinstance(item, pg.PlotCurveItem) and item in self._curves:
            self._curves.remove(item)
            item.setFlag(NO_CONTENTS, False)
            item.sigPlotChanged.disconnect(self._curve_changed)
            self._drawn.pop(id(item), None)
            self._tails.pop(id(item), None)
            self.invalidate()

    def invalidate(self) -> None:
        """Repaint the whole image at the next paint."""
        self._key = None
        self.update()

    def advance(self, t_ref: float) -> float:
        """The graph's new time origin for a newest sample at ``t_ref``: the old one moved by
        a whole number of device pixels, within half a pixel of ``t_ref``."""
        (x0, x1), width = self._vb.viewRange()[0], self._vb.width()
        view = self._vb.getViewWidget()
        dpr = view.devicePixelRatioF() if view is not None else 1.0
        pps = width * dpr / (x1 - x0) if x1 > x0 and width > 0 else 0.0
        k = math.floor((t_ref - self._t0) * pps + 0.5) if self._t0 is not None else -1
        if self._t0 is None or pps != self._pps or pps <= 0.0 or k < 0:
            self._t0, self._pps = t_ref, pps  # a new scale or time went back: start over
            self._pending, self._pending_s = 0, 0.0
            self.invalidate()
            return t_ref
        step = k / pps
        self._t0 += step
        self._pending += k
        self._pending_s += step
        return self._t0

    # -- QGraphicsItem ----------------------------------------------------------------------
    def boundingRect(self) -> QRectF:  # noqa: N802 (Qt's name)
        return QRectF(self._vb.rect())

    def generateSvg(self, nodes: dict[str, Any]) -> None:  # noqa: N802 (pyqtgraph's name)
        """Nothing of its own in an SVG export: the curves export themselves there."""
        return None

    def paint(self, p: QPainter, opt: QStyleOptionGraphicsItem,
              widget: QWidget | None = None) -> None:
        curves = [c for c in self._curves if c.isVisible()]
        curves.sort(key=lambda c: c.zValue())  # stable: added order at equal z
        if not curves:
            return
        dev = p.deviceTransform()
        if (self._exportOpts is not False or widget is None or dev.isRotating()
                or dev.m11() <= 0 or dev.m22() <= 0):
            for c in curves:  # an export or a render elsewhere: draw them, no cache
                p.save()
                p.setTransform(c.itemTransform(self)[0], combine=True)
                c.paint(p, opt, widget)
                p.restore()
            return
        rect = dev.mapRect(self.boundingRect())
        left, top = math.floor(rect.left() + 1e-6), math.floor(rect.top() + 1e-6)
        w = math.ceil(rect.right() - 1e-6) - left
        h = math.ceil(rect.bottom() - 1e-6) - top
        if w <= 0 or h <= 0:
            return
        dpr = widget.devicePixelRatioF()
        # device pixels of the image; its painter scales by the ratio, as the view's does
        # (cosmetic pens are as wide in both)
        to_image = dev * QTransform.fromTranslate(-left, -top)
        fill = self._background()
        key = (w, h, dpr, round(dev.m11(), 9), round(dev.m22(), 9), round(dev.dx() - left, 6),
               round(dev.dy() - top, 6), tuple(map(tuple, self._vb.viewRange())),
               fill.rgba() if fill is not None else None, tuple(_signature(c) for c in curves))
        if key != self._key or self._image is None or self._pending >= w:
            self._render_all(curves, to_image, w, h, dpr, fill, opt, widget)
            self._key = key
        else:
            self._render_strip(curves, to_image, w, opt, widget)
        self._pending, self._pending_s = 0, 0.0
        self._drawn = {id(c): (c.xData, c.yData) for c in curves}
        p.save()
        p.resetTransform()
        inverse, _ = p.deviceTransform().inverted()  # logical -> device (ratio, redirection)
        p.setWorldTransform(QTransform.fromTranslate(left, top) * inverse)
        image, at = self._image, self._offset
        assert image is not None
        # One device pixel to one device pixel: the ring's two parts, oldest columns first.
        p.drawImage(QRectF(0, 0, w - at, h), image, QRectF(at, 0, w - at, h))
        if at:
            p.drawImage(QRectF(w - at, 0, at, h), image, QRectF(0, 0, at, h))
        p.restore()

    # -- internals --------------------------------------------------------------------------
    def _curve_changed(self, _curve: object) -> None:
        self.update()

    def _resized(self) -> None:
        self.prepareGeometryChange()
        self.invalidate()

    def _background(self) -> QColor | None:
        """The opaque colour under the curves (the image is painted on it: an opaque image
        is copied to the screen, not blended), or None to keep the image transparent."""
        view = self._vb.getViewWidget()
        if self._vb.background.isVisible() or view is None:
            return None
        brush = view.backgroundBrush()
        colour = brush.color()
        solid = brush.style() == Qt.BrushStyle.SolidPattern and colour.alpha() == 255
        return colour if solid else None

    def _render_all(self, curves: list[pg.PlotCurveItem], to_image: QTransform, w: int,
                    h: int, dpr: float, fill: QColor | None, opt: QStyleOptionGraphicsItem,
                    widget: QWidget | None) -> None:
        opaque = QImage.Format.Format_RGB32
        self._image = QImage(w, h, QImage.Format.Format_ARGB32_Premultiplied
                             if fill is None else opaque)
        self._image.setDevicePixelRatio(dpr)
        self._fill = fill if fill is not None else QColor(0, 0, 0, 0)
        self._offset = 0
        self._paint_curves(curves, to_image, 0, opt, widget)
        self.full_renders += 1

    def _render_strip(self, curves: list[pg.PlotCurveItem], to_image: QTransform, w: int,
                      opt: QStyleOptionGraphicsItem, widget: QWidget | None) -> None:
        image = self._image
        assert image is not None
        shift = self._pending
        self._offset = (self._offset + shift) % w  # the ring: the oldest columns go first
        (x0, x1), width = self._vb.viewRange()[0], self._vb.width()
        x_from = x0 + GUARD_PX * (x1 - x0) / width
        dirty = float(w - shift)
        for c in curves:
            old = self._drawn.get(id(c))
            if old is None or old[0] is None or c.xData is None:
                changed: float | None = (None if old is not None and old[0] is None
                                         and c.xData is None else -math.inf)
            elif old[0] is c.xData and old[1] is c.yData and not shift:
                changed = None
            else:
                changed = changed_from(old, (c.xData, c.yData), self._pending_s, x_from)
            if changed is None:
                continue
            if changed == -math.inf:
                fill = self._fill if self._fill.alpha() else None
                self._render_all(curves, to_image, w, image.height(),
                                 image.devicePixelRatio(), fill, opt, widget)
                return
            at = to_image.map(c.mapToItem(self, QPointF(changed, 0.0))).x()
            pen = c.opts.get("pen")
            margin = (pen.widthF() if isinstance(pen, QPen) else 1.0) * to_image.m11() + 2.0
            dirty = min(dirty, at - margin)
        start = max(0, math.floor(dirty))
        if start < w:
            self._paint_curves(curves, to_image, start, opt, widget, tails=True)
            self.strip_renders += 1

    def _tail(self, curve: pg.PlotCurveItem, to_graph: QTransform, start: int
              ) -> pg.PlotCurveItem:
        """``curve`` from two points before graph column ``start`` on: the same options and
        drawing code on a few points, for a strip (building a path of every point cost more
        than painting the strip)."""
        x, y = curve.xData, curve.yData
        inverse, ok = to_graph.inverted()
        if not ok or x is None or y is None or len(x) < 3:
            return curve
        i = max(0, int(np.searchsorted(x, inverse.map(QPointF(start, 0.0)).x())) - 2)
        if i == 0:
            return curve
        tail = self._tails.get(id(curve))
        if tail is None:
            tail = self._tails[id(curve)] = LiteCurve()
        tail.opts = curve.opts  # shared, read only: setData(x, y) does not write to it
        tail.setData(x[i:], y[i:])
        return tail

    def _paint_curves(self, curves: list[pg.PlotCurveItem], to_image: QTransform, start: int,
                      opt: QStyleOptionGraphicsItem, widget: QWidget | None,
                      tails: bool = False) -> None:
        """Clear and paint the graph's columns from ``start`` to its right edge (``tails``:
        from the curves' points near them only): in the ring they are one or two runs of
        the image's columns."""
        image = self._image
        assert image is not None
        w, h, at = image.width(), image.height(), self._offset
        runs = [(start, w)] if start + at >= w else [(start, w - at), (w - at, w)]
        dpr = image.devicePixelRatio()
        painter = QPainter(image)
        try:
            for g0, g1 in runs:
                if g1 <= g0:
                    continue
                dx = at if g0 < w - at else at - w  # graph column g is image column g + dx
                unscale = (to_image * QTransform.fromTranslate(dx, 0)
                           * QTransform.fromScale(1 / dpr, 1 / dpr))
                painter.setClipping(False)
                painter.resetTransform()
                painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_Source)
                painter.fillRect(QRectF((g0 + dx) / dpr, 0, (g1 - g0) / dpr, h / dpr), self._fill)
                painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_SourceOver)
                # these columns, and the ViewBox's own rect, which clips the curves in the view
                painter.setClipRect(QRectF((g0 + dx) / dpr, 0, (g1 - g0) / dpr, h / dpr))
                painter.setClipRect(unscale.mapRect(self.boundingRect()),
                                    Qt.ClipOperation.IntersectClip)
                for c in curves:
                    to_curve = c.itemTransform(self)[0]
                    drawn = self._tail(c, to_curve * to_image, start) if tails else c
                    painter.save()
                    painter.setOpacity(c.opacity())
                    painter.setTransform(to_curve * unscale)
                    drawn.paint(painter, opt, widget)
                    painter.restore()
        finally:
            painter.end()
