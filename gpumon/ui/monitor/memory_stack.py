"""Memory by process: a GPU panel's used-memory graph drawn as stacked bands, one per process.

View ▸ Memory by process (and the memory graph's context menu) turns it on for every panel;
the choice is remembered (``panel_options.MemoryStacks``). ``PanelStack`` draws one panel's
bands from the History (``memory_bands.py`` says which bands) each time the panel draws its
curves, so it also draws after a panel was hidden and at any time window.

Each band is a filled curve from 0 to its top edge, in an opaque colour (the theme's
background blended in, as the panel's own fill): the upper bands are drawn first and the
lower ones over them. The remainder band has the colour of the ordinary "used" fill, so the
graph reads as before with the processes laid into it. A process keeps its colour while it
is in the History. The legend names the bands; a process's name is someone else's text:
control characters escaped, cut to ``NAME_CHARS``, shown as plain text.
"""

from __future__ import annotations

import html
import zlib

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter
from PySide6.QtWidgets import QGraphicsSceneMouseEvent

from gpumon.i18n import N_, tr
from gpumon.telemetry.history.decimate import peak_decimate
from gpumon.telemetry.history.memory_bands import OTHERS, REMAINDER, Band, memory_bands
from gpumon.telemetry.history.store import History
from gpumon.ui.monitor.panel import GpuPanel
from gpumon.ui.monitor.panel_labels import MEM_COLOR
from gpumon.ui.monitor.panel_plots import FILL_ALPHA
from gpumon.ui.widgets.curve import LiteCurve
from gpumon.ui.widgets.plot_style import FILL_ATTR, opaque_fill
from gpumon.units import GIB
from gpumon.untrusted import for_terminal

PALETTE = ("#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#bcbd22",
           "#17becf")  # the processes' colours: not the blue of "used", not the grey of others
OTHERS_COLOR = "#9e9e9e"
BAND_ALPHA = 0.6  # a process band's colour over the background (the remainder: FILL_ALPHA)
NAME_CHARS = 24  # a process's name in the legend, at most
BAND_Z = 0.5  # above the panel's "used" fill (z 0), below its lines (raised to LINE_Z)
LINE_Z = 2.0
LEGEND_ALPHA = 200  # the legend's box: the graph's background, a little see-through
OTHERS_TEXT = N_("others")
REMAINDER_TEXT = N_("unattributed")
NONE_TEXT = N_("used (no memory by process reported)")


def legend_name(name: str | None, pid: int | None) -> str:
    """A process's legend text: its name escaped and cut, and its PID; plain text (the
    legend draws HTML, so the text is HTML-escaped too)."""
    text = for_terminal(name or "?")
    if len(text) > NAME_CHARS:
        text = text[:NAME_CHARS - 1] + "…"
    return html.escape(f"{text} ({pid})", quote=False)


class _Swatch(pg.ItemSample):
    """A legend entry's square in its band's colour, ``side`` pixels (it follows the zoom);
    a click does not hide the band."""

    def __init__(self, item: LiteCurve, side: float) -> None:
        super().__init__(item)
        self.side = max(8.0, side)
        self.setFixedWidth(self.side + 4)
        self.setFixedHeight(self.side + 4)

    def boundingRect(self) -> QRectF:
        return QRectF(0, 0, self.side + 4, self.side + 4)

    def paint(self, p: QPainter, *args: object) -> None:
        p.setPen(pg.mkPen(self.item.opts["pen"]))
        p.setBrush(self.item.opts["brush"])
        p.drawRect(QRectF(2, 2, self.side, self.side))

    def mouseClickEvent(self, event: QGraphicsSceneMouseEvent) -> None:
        event.ignore()


class PanelStack:
    """The bands of one panel; the panel calls it with (t_ref, window_s) after its curves."""

    def __init__(self, panel: GpuPanel, history: History) -> None:
        self.panel = panel
        self.history = history
        self.curves: list[LiteCurve] = []  # bottom band first
        self.keys: list[str] = []  # the band each curve shows
        self.colors: dict[str, str] = {}  # a process band's colour while it is kept
        self.legend = pg.LegendItem(offset=(4, 4), verSpacing=-4, horSpacing=12)
        self.legend.setParentItem(panel.memory_plot.getViewBox())
        self.legend.setZValue(LINE_Z + 1)
        self._legend_texts: list[str] = []
        self._legend_look: tuple[str, float, int] | None = None

    def __call__(self, t_ref: float, window_s: float) -> None:
        plot = self.panel.memory_plot
        memory = self.history.process_memory(self.panel.index, since=t_ref - window_s)
        bands = memory_bands(memory)
        self._pick_colors(bands.bands, {f"pid:{e.pid}:{e.started_s}" for e, _ in
                                        memory.processes})
        while len(self.curves) < len(bands.bands):
            curve = LiteCurve(pen=pg.mkPen(MEM_COLOR, width=1), fillLevel=0.0,
                              connect="finite")
            plot.addItem(curve)
            self.curves.append(curve)
        x = bands.times - t_ref
        width = plot.getViewBox().width()
        columns = width * (x[-1] - x[0]) / window_s if len(x) > 1 and window_s > 0 else 0.0
        keys = [b.key for b in bands.bands]
        for i, (band, top) in enumerate(zip(bands.bands, bands.tops(), strict=True)):
            curve = self.curves[i]
            if i >= len(self.keys) or self.keys[i] != band.key:
                self._style(curve, self._color(band))
            curve.setZValue(BAND_Z + 0.01 * (len(bands.bands) - i))  # lower bands in front
            curve.show()
            xd, yd = peak_decimate(x, top / GIB, columns)
            curve.setData(xd, yd, connect="finite", skipFiniteCheck=bool(np.isfinite(yd).all()))
        for curve in self.curves[len(bands.bands):]:
            curve.hide()
        self.keys = keys
        self._raise_lines()
        self._set_legend(bands.bands, bands.attributed)

    def remove(self) -> None:
        """Take the bands and the legend off the panel."""
        plot = self.panel.memory_plot
        for curve in self.curves:
            plot.removeItem(curve)
        self.curves.clear()
        scene = self.legend.scene()
        if scene is not None:
            scene.removeItem(self.legend)

    # -- internals ---------------------------------------------------------------------------
    def _pick_colors(self, bands: tuple[Band, ...], kept: set[str]) -> None:
        """A colour for each process band not coloured yet: its own by a hash of its key,
        or the next one no other band shown uses. Processes no longer kept are forgotten."""
        self.colors = {k: c for k, c in self.colors.items() if k in kept}
        for band in bands:
            if band.pid is None or band.key in self.colors:
                continue
            taken = {self.colors.get(b.key) for b in bands}
            start = zlib.crc32(band.key.encode())
            for j in range(len(PALETTE)):
                color = PALETTE[(start + j) % len(PALETTE)]
                if color not in taken:
                    break
            self.colors[band.key] = color

    def _color(self, band: Band) -> str:
        if band.key == REMAINDER:
            return MEM_COLOR
        if band.key == OTHERS:
            return OTHERS_COLOR
        return self.colors.get(band.key, OTHERS_COLOR)

    def _style(self, curve: LiteCurve, color: str) -> None:
        alpha = FILL_ALPHA if color == MEM_COLOR else BAND_ALPHA
        background = self.panel.memory_widget.backgroundBrush().color().name()
        curve.setPen(pg.mkPen(color, width=1))
        curve.setBrush(pg.mkBrush(opaque_fill(color, alpha, background)))
        setattr(curve, FILL_ATTR, (color, alpha))  # the theme re-blends it

    def _raise_lines(self) -> None:
        """The panel's lines (other series, markers, the total, the crosshair) over the
        bands; its own filled "used" curve stays under them."""
        for item in self.panel.memory_plot.getViewBox().addedItems:
            if item not in self.curves and item.zValue() < LINE_Z and not (
                    isinstance(item, pg.PlotCurveItem) and item.opts.get("fillLevel")
                    is not None):
                item.setZValue(LINE_Z)

    def _set_legend(self, bands: tuple[Band, ...], attributed: bool) -> None:
        """The bands' names, the largest process first, on the graph's background; as many
        as fit three quarters of the graph's height (at a large zoom, the largest few)."""
        texts = []
        for band in bands:
            if band.key == REMAINDER:
                texts.append(tr(REMAINDER_TEXT) if attributed else tr(NONE_TEXT))
            elif band.key == OTHERS:
                texts.append(tr(OTHERS_TEXT))
            else:
                texts.append(legend_name(band.name, band.pid))
        # the axes' colour and tick size: they follow the theme and the zoom (theme.py)
        axis = self.panel.memory_plot.getAxis("left")
        color = axis.textPen().color() if axis is not None else QColor("#333333")
        font = axis.style.get("tickFont") if axis is not None else None
        label_font = QFont(font) if isinstance(font, QFont) else QFont()
        pt = label_font.pointSizeF() if label_font.pointSizeF() > 0 else 8.0
        label_font.setPointSizeF(0.9 * pt)
        line = QFontMetricsF(label_font).height()
        side = 0.8 * line
        rows = max(1, int(0.75 * self.panel.memory_plot.getViewBox().height() // (line + 2)))
        look = (color.name(), pt, rows)
        if texts == self._legend_texts and look == self._legend_look:
            return
        self._legend_texts, self._legend_look = texts, look
        background = QColor(self.panel.memory_widget.backgroundBrush().color())
        background.setAlpha(LEGEND_ALPHA)
        self.legend.clear()
        self.legend.setBrush(pg.mkBrush(background))
        self.legend.setLabelTextColor(color)
        self.legend.setLabelTextSize(f"{0.9 * pt:.1f}pt")
        for curve, text in list(zip(self.curves, texts, strict=False))[:rows]:
            self.legend.addItem(_Swatch(curve, side), text)
