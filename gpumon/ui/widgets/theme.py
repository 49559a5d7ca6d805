"""Light and dark themes: a QPalette for the widgets and colours for the pyqtgraph plots.

A theme is plain data. ``palette_for`` builds the QPalette; ``style_plot`` restyles one
plot widget (background, axes, grid, tick and label fonts, curve widths, fills, legend and
marker labels) for a theme and a zoom factor. Applying it again is harmless, so the
presentation controller simply restyles every plot it finds after any change.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QPalette, QPen

from gpumon.ui.widgets.plot import LitePlotWidget, fit_legend

BASE_WIDTH_ATTR = "_gpumon_base_pen_width"  # a curve's width at 100 %, kept on the curve
FILL_ATTR = "_gpumon_fill"  # (colour, alpha) of a filled curve, re-blended for each theme
MARKER_ATTR = "_gpumon_marker"  # (light, dark) colours of a marker line, kept on the line
MARKER_LABEL_ALPHA = 210  # the marker label's box: the plot's background, slightly see-through


@dataclass(frozen=True)
class Theme:
    """Colours of one theme; ``None`` palette colours mean "the style's own palette"."""

    name: str
    plot_bg: str
    plot_fg: str  # axes, tick labels, grid (drawn with the axis pen at low alpha)
    muted: str  # secondary text (hover readout)
    banner_text: str  # text on the light orange "no data" banner
    note_bg: str = "#e3f2fd"  # a note on the page (the cluster window's Playground note)
    note_border: str = "#90caf9"
    note_text: str = "#1a1a1a"
    window: str | None = None
    base: str | None = None
    alt_base: str | None = None
    text: str | None = None
    button: str | None = None
    highlight: str | None = None
    link: str | None = None
    disabled_text: str | None = None


LIGHT = Theme("light", plot_bg="#ffffff", plot_fg="#333333", muted="#333333",
              banner_text="#222222")
DARK = Theme("dark", plot_bg="#16181c", plot_fg="#c9cdd4", muted="#b8bcc4",
             banner_text="#222222", note_bg="#1d3348", note_border="#3f6c96",
             note_text="#e4e6ea", window="#25272b", base="#1b1d21", alt_base="#2a2d32",
             text="#e4e6ea", button="#2f3237", highlight="#3d7bd9", link="#7fb0ff",
             disabled_text="#7b7f86")
THEMES: dict[str, Theme] = {t.name: t for t in (LIGHT, DARK)}


def palette_for(theme: Theme, base: QPalette) -> QPalette:
    """``base`` (the style's standard palette) with the theme's colours set on it."""
    pal = QPalette(base)
    if theme.window is None:
        return pal
    r = QPalette.ColorRole
    colours = {
        r.Window: theme.window, r.WindowText: theme.text, r.Base: theme.base,
        r.AlternateBase: theme.alt_base, r.Text: theme.text, r.Button: theme.button,
        r.ButtonText: theme.text, r.ToolTipBase: theme.alt_base, r.ToolTipText: theme.text,
        r.Highlight: theme.highlight, r.HighlightedText: "#ffffff", r.Link: theme.link,
        r.PlaceholderText: theme.disabled_text, r.BrightText: "#ff6b6b",
        r.Light: "#3a3d43", r.Midlight: "#33363b", r.Mid: "#2a2c30", r.Dark: "#141518",
        r.Shadow: "#000000",
    }
    for role, colour in colours.items():
        if colour is not None:
            pal.setColor(role, QColor(colour))
    grey = QColor(theme.disabled_text or "#808080")
    for role in (r.WindowText, r.Text, r.ButtonText):
        pal.setColor(QPalette.ColorGroup.Disabled, role, grey)
    return pal


def is_dark(palette: QPalette) -> bool:
    """True for a dark theme: the window colour is darker than mid-grey."""
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


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


def note_style(theme: Theme) -> str:
    """A note on a page (where the playground runs, what a machine cannot give): light blue
    in the light theme, dark blue with light text in the dark one."""
    return (f"background: {theme.note_bg}; color: {theme.note_text};"
            f" border: 1px solid {theme.note_border}; padding: 4px;")
