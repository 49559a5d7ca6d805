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
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF

from gpumon.telemetry.history.decimate import anchored_peak_decimate

FAST_KEYS = frozenset({"connect", "skipFiniteCheck"})


class LiteCurve(pg.PlotCurveItem):
    """A PlotCurveItem bounded by its ViewBox's visible rect, with a lean ``setData``."""

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
        self.informViewBoundsChanged()  # auto-range, where it is on, sees the new data
        self.update()
        self.sigPlotChanged.emit(self)

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
