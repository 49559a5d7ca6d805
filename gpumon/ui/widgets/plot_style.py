"""How a pyqtgraph plot looks in a theme at a zoom: background, axes, tick and label fonts,
curve widths, fills, legend and marker labels.

``style_plot`` applies it to one plot widget. Applying it again is harmless, so the
presentation controller simply restyles every plot it finds after any change. Apart from
``theme.py`` (plain data) so that the window's first frame does not load pyqtgraph.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QPen

from gpumon.ui.widgets.plot import LitePlotWidget, fit_legend
from gpumon.ui.widgets.theme import DARK, Theme

BASE_WIDTH_ATTR = "_gpumon_base_pen_width"  # a curve's width at 100 %, kept on the curve
FILL_ATTR = "_gpumon_fill"  # (colour, alpha) of a filled curve, re-blended for each theme
MARKER_ATTR = "_gpumon_marker"  # (light, dark) colours of a marker line, kept on the line
MARKER_LABEL_ALPHA = 210  # the marker label's box: the plot's background, slightly see-through


def style_marker(line: pg.InfiniteLine, color: str, background: QColor | str) -> None:
    """A marker's dashed line and label in ``color``, the label's box in ``background``."""
    line.setPen(pg.mkPen(color, width=1, style=Qt.PenStyle.DashLine))
    label = getattr(line, "label", None)
    if isinstance(label, pg.TextItem):
        box = QColor(background)
        box.setAlpha(MARKER_LABEL_ALPHA)
        label.setColor(color)
        label.fill = pg.mkBrush(box)
        label.update()


def opaque_fill(color: str, alpha: float, background: str) -> QColor:
    """``color`` at ``alpha`` over ``background``, as one opaque colour. The raster engine
    fills an opaque brush several times faster than a translucent one; the grid stays
    visible because pyqtgraph draws it with the axes, above the curves."""
    fg, bg = QColor(color), QColor(background)
    return QColor(*(round(alpha * f + (1.0 - alpha) * b) for f, b in
                    ((fg.red(), bg.red()), (fg.green(), bg.green()), (fg.blue(), bg.blue()))))


def style_plot(widget: LitePlotWidget, theme: Theme, zoom: float, base_pt: float) -> None:
    """Restyle one plot widget for ``theme`` at ``zoom`` (1.0 = 100 %) of ``base_pt`` points."""
    widget.setBackground(theme.plot_bg)
    item = widget.getPlotItem()
    tick_font = QFont()
    tick_font.setPointSizeF(max(5.0, base_pt * zoom * 0.9))
    label_pt = max(5.0, base_pt * zoom)
    for side in ("left", "bottom", "right", "top"):
        axis = item.getAxis(side)
        if axis is None:
            continue
        if axis.pen().color() != QColor(theme.plot_fg):  # each set lays the label out again
            axis.setPen(theme.plot_fg)
        if axis.textPen().color() != QColor(theme.plot_fg):
            axis.setTextPen(theme.plot_fg)
        axis.setTickFont(tick_font)
        if axis.labelText or axis.labelUnits:
            axis.setLabel(axis.labelText or None, axis.labelUnits or None,
                          axis.labelUnitPrefix or None,
                          **{"color": theme.plot_fg, "font-size": f"{label_pt:.1f}pt"})
    for curve in item.listDataItems():
        _scale_pen(curve, zoom)
        fill = getattr(curve, FILL_ATTR, None)
        if fill is not None:
            curve.setBrush(pg.mkBrush(opaque_fill(fill[0], fill[1], theme.plot_bg)))
    legend = item.legend
    if legend is not None:
        legend.setLabelTextColor(theme.plot_fg)
        legend.setLabelTextSize(f"{max(5.0, base_pt * zoom * 0.9):.1f}pt")
        legend.setBrush(pg.mkBrush(QColor(theme.plot_bg).lighter(110)))
        for _, label in legend.items:  # setLabelText* only store the style: lay it out again
            label.setText(label.text)
        fit_legend(legend)
    marker_font = QFont()
    marker_font.setPointSizeF(max(5.0, base_pt * zoom * 0.9))
    for it in item.items:
        label = getattr(it, "label", None)
        if isinstance(it, pg.InfiniteLine) and isinstance(label, pg.TextItem):
            label.setFont(marker_font)
        colors = getattr(it, MARKER_ATTR, None)
        if isinstance(it, pg.InfiniteLine) and colors is not None:
            style_marker(it, colors[theme.name == DARK.name], theme.plot_bg)


def _scale_pen(curve: pg.PlotDataItem | pg.PlotCurveItem, zoom: float) -> None:
    """Curves grow thicker with the zoom (never thinner than their 100 % width)."""
    pen = curve.opts.get("pen")
    if not isinstance(pen, QPen):
        return
    base = getattr(curve, BASE_WIDTH_ATTR, None)
    if base is None:
        base = pen.widthF()
        setattr(curve, BASE_WIDTH_ATTR, base)
    new = QPen(pen)
    new.setWidthF(base * max(1.0, zoom))
    curve.setPen(new)
