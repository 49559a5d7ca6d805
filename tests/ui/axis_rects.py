"""Where an axis's unit title ("GiB", "%") lies over its tick numbers (issue 57, item 3):
the title's rectangle and each drawn tick label's, compared in the scene. Used by
``test_axis_titles.py`` and by the walk (``walk_run.py``) for every graph of every window."""

from __future__ import annotations

from collections.abc import Sequence

import pyqtgraph as pg
from PySide6.QtCore import QRectF
from PySide6.QtGui import QImage, QPainter

from gpumon.ui.widgets.plot import LitePlot, LitePlotWidget


def tick_rects(axis: pg.AxisItem) -> list[tuple[str, QRectF]]:
    """Each tick label the axis draws and its rectangle in the scene."""
    image = QImage(8, 8, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    specs = axis.generateDrawSpecs(painter)
    painter.end()
    return [(text, axis.mapRectToScene(rect)) for rect, _, text in (specs[2] if specs else [])]


def title_overlaps(plots: Sequence[LitePlotWidget | LitePlot]) -> list[str]:
    """One line per tick label of a left axis that its title covers."""
    found = []
    for plot in plots:
        item = plot.getPlotItem() if isinstance(plot, LitePlotWidget) else plot
        axis = item.getAxis("left")
        if not axis.label.isVisible() or not (axis.labelText or axis.labelUnits):
            continue
        title = axis.label.mapRectToScene(axis.label.boundingRect())
        for text, rect in tick_rects(axis):
            if title.intersects(rect):
                found.append(f"axis title {axis.labelText!r} {title.getRect()} over {text!r} "
                             f"{rect.getRect()}")
    return found
