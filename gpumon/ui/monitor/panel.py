"""One GPU: a memory graph, a utilization graph and the current readouts.

The x axis is seconds relative to the newest snapshot (0 = now, -60 = a minute ago).
Curves are created once and fed with ``setData`` on every refresh (pyqtgraph's
scrollingPlots example). What keeps a redraw cheap on a software raster (measured in
``benchmarks/bench_drawing.py``):
``anchored_peak_decimate``, a min and a max per pixel column like pyqtgraph's "peak" mode
but always drawing the newest sample, fed to plain PlotCurveItems
(a PlotDataItem also builds a scatter item and a display pipeline per curve), 1 px pens, a
grid of major and minor ticks only, axes and grid cached as pixmaps (they change only with
the ranges, the size, the theme or the zoom), an opaque fill under the memory curve (the
theme's background blended in beforehand: a translucent fill cost ~7x as much to paint),
and labels set only when their text changes.
``update_view(..., curves=False)`` updates the readouts only: the grid does that for a
panel that is not on screen, and catches its curves up when it shows again.

Extending a panel (the playground does this)::

    panel = window.gpu_panel(0)
    panel.add_memory_series("torch_allocated_bytes", "torch allocated", "#d62728")
    panel.add_marker(time.time(), "x.to('cuda:0')", "#444")

``add_memory_series`` plots a History series (bytes, shown in GiB) on the memory graph at
every refresh and returns its PlotCurveItem; the key is any ``Snapshot.extra[gpu]`` key or
``"self_mem_bytes"``. ``panel.memory_plot`` / ``panel.util_plot`` are the plots
(``plot.LitePlot``: a ViewBox with a left and a bottom axis and PlotItem's methods) for
anything else.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QGraphicsOpacityEffect,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from gpumon.i18n import tr
from gpumon.telemetry.model.readouts import extra_readouts, readout_line
from gpumon.telemetry.model.types import GpuInfo, GpuSample
from gpumon.ui.monitor.graph_labels import GraphLabels
from gpumon.ui.monitor.panel_header import PanelHeader
from gpumon.ui.monitor.panel_hover import Crosshair
from gpumon.ui.monitor.panel_labels import (
    GPU_UTIL_COLOR,
    MEM_COLOR,
    MEM_UTIL_COLOR,
    item_forms,
    memory_forms,
    memory_runs,
    tooltip_text,
    util_runs,
)
from gpumon.ui.monitor.panel_plots import PLOT_MIN_HEIGHT, add_curve, make_plot
from gpumon.ui.monitor.panel_view import PanelView
from gpumon.ui.widgets.curve import set_series
from gpumon.ui.widgets.field import Field
from gpumon.ui.widgets.hover_box import HoverBox
from gpumon.ui.widgets.lazy_tip import LazyTip
from gpumon.ui.widgets.plot import LitePlot, LitePlotWidget
from gpumon.ui.widgets.plot_style import MARKER_ATTR, style_marker
from gpumon.ui.widgets.runs_label import RunsLabel, TextRun
from gpumon.ui.widgets.theme import is_dark
from gpumon.units import GIB

TOTAL_COLOR = "#7f7f7f"
LOST_COLOR = "#c62828"
MAX_MARKERS = 500
JITTER_S = 0.02  # timer jitter allowed for when deciding whether the curves moved enough
# At 100 % a panel is at least 300 px wide (four to a row of a 1400 px window: 8 GPUs in two
# rows) and at least 36 average characters at larger fonts (two to a row at 300 %).
PANEL_MIN_WIDTH = 300
PANEL_MIN_CHARS = 36
PLOT_MIN_LINES = 3  # a graph is at least this many tick-label lines tall (126 px at 300 %)
PLOT_GOOD_LINES = 6  # and this tall where the window has the room (monitor/page.py)
PLOT_SPACING = 6  # between the memory and the utilization graph
MARGINS = (6, 4, 6, 4)  # left, top, right, bottom
SeriesFn = Callable[[int, str], "tuple[np.ndarray, np.ndarray]"]


@dataclass
class _Series:
    key: str
    curve: pg.PlotCurveItem
    scale: float


class GpuPanel(QFrame):
    """The view of one GPU. ``update_view`` is the only per-tick entry point."""

    hovered = Signal(int, float)  # gpu index, absolute time (s since epoch) under the mouse
    unhovered = Signal(int)  # gpu index: the pointer left the graphs (readout and crosshair go)

    def __init__(self, info: GpuInfo, parent: QWidget | None = None, *,
                 window_s: float = 300.0) -> None:
        super().__init__(parent)
        self.info = info
        self.index = info.index
        self.setObjectName(f"gpuPanel{info.index}")
        self.setAccessibleName(tr("GPU {index} panel", index=info.index))
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self._t_ref = 0.0  # absolute time of x = 0
        self._drawn = False  # curves drawn at least once since the last change of layout
        self._window_s = float(window_s)
        self._lost = False
        self._stale = False
        self._series: list[_Series] = []
        self._markers: list[tuple[float, pg.InfiniteLine]] = []
        self._y_total: float | None = None  # the memory axis's top is set for this total
        self.stack: Callable[[float, float], None] | None = None  # memory_stack.PanelStack
        self.views: list[PanelView] = []  # under the graphs (add_view)

        self.header = PanelHeader(info)  # title, clock words and health mark in one line
        self.title: RunsLabel = self.header.title
        self.health = self.header.health  # set by the window (health_events.py)
        self.lost_label = QLabel()
        self.lost_label.setObjectName(f"lostLabel{info.index}")
        self.lost_label.setTextFormat(Qt.TextFormat.PlainText)  # the reason may be remote text
        # No word wrap in a panel: a height-for-width label makes the scroll area lay the
        # grid out at its preferred height. Long text is clipped; the tooltip has it all.
        # (The other lines are RunsLabels: cut with "…", the whole line in their tooltip.)
        self.lost_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.lost_label.hide()  # styled when first shown: a style sheet costs ~1 ms a panel
        # The per-tick labels paint styled runs themselves (runs_label.py): rich-text
        # QLabels cost about half of a tick's work besides the curves.
        self.readouts = RunsLabel()
        self.readouts.setObjectName(f"readouts{info.index}")
        self.mem_label = RunsLabel()
        self.util_label = RunsLabel()
        for lab in (self.readouts, self.mem_label, self.util_label):
            lab.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        # side by side over their graphs, or stacked in a narrow panel (graph_labels.py)
        self.graph_labels = GraphLabels(self.mem_label, self.util_label, PLOT_SPACING)
        # the readings with no room above the graphs, made when the tooltip is shown
        self._tip_sample: GpuSample | None = None
        self.tip = LazyTip(lambda: tooltip_text(self.info, extra_readouts(self._tip_sample)),
                           self.title, self.readouts)

        self.memory_widget = make_plot("GiB")
        self.util_widget = make_plot("%")
        self.memory_plot: LitePlot = self.memory_widget.getPlotItem()
        self.util_plot: LitePlot = self.util_widget.getPlotItem()
        self.util_plot.setYRange(0, 100, padding=0.02)
        self.util_plot.getViewBox().setLimits(yMin=-2, yMax=102)
        self.memory_plot.getViewBox().enableAutoRange(y=False)

        self._mem_curve = add_curve(self.memory_plot, MEM_COLOR, tr("used"), fill=True)
        self._total_line = pg.InfiniteLine(
            angle=0, movable=False, pen=pg.mkPen(TOTAL_COLOR, width=1,
                                                 style=Qt.PenStyle.DashLine))
        self.memory_plot.addItem(self._total_line, ignoreBounds=True)
        self._total_line.hide()
        self._gpu_curve = add_curve(self.util_plot, GPU_UTIL_COLOR, "GPU")
        self._memu_curve = add_curve(self.util_plot, MEM_UTIL_COLOR, tr("memory controller"))
        self.crosshair = Crosshair(self, (self.memory_widget, self.util_widget),
                                   lambda: self._window_s, self.hover_at, self.clear_hover)
        self.util_plot.setXLink(self.memory_plot)

        self._build_layout()
        # Made when the panel first goes stale: even disabled, an effect on every panel
        # cost ~2 ms a panel at start-up.
        self._opacity: QGraphicsOpacityEffect | None = None
        self.set_window(self._window_s)
        self._fit_to_font()

    def _build_layout(self) -> None:
        """Header line, lost banner, readouts, the graphs' readings, then the graphs side by
        side (``graphs``: a row a further graph can join)."""
        self.graphs = QHBoxLayout()
        self.graphs.setSpacing(PLOT_SPACING)
        self.graphs.addWidget(self.memory_widget, 1)
        self.graphs.addWidget(self.util_widget, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(*MARGINS)
        layout.setSpacing(2)
        layout.addWidget(self.header)
        layout.addWidget(self.lost_label)
        layout.addWidget(Field(self.readouts))  # a new reading never relayouts (field.py)
        layout.addWidget(self.graph_labels)
        layout.addLayout(self.graphs, 1)
        self._layout = layout  # views join it under the graphs (add_view)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:  # the zoom: room for the bigger text
            if self.styleSheet():  # a lost GPU's red border: see _follow_font
                self._follow_font()
            self._fit_to_font()

    def _follow_font(self) -> None:
        """Polish the children again: under a panel with a style sheet they kept the font
        they had when it was set (a lost GPU's text stayed 100 % at 200 %)."""
        for child in self.findChildren(QWidget):
            style = child.style()
            style.unpolish(child)
            style.polish(child)

    def _fit_to_font(self) -> None:
        """Minimum sizes from the font: at 300 % a 110 px graph had room for one tick label
        and the panel's three text lines took half of it. The grid scrolls instead."""
        fm = self.fontMetrics()
        plot_h = max(PLOT_MIN_HEIGHT, PLOT_MIN_LINES * fm.height())
        for w in (self.memory_widget, self.util_widget):
            w.setMinimumHeight(plot_h)
        self.setMinimumWidth(max(
            PANEL_MIN_WIDTH, PANEL_MIN_CHARS * fm.averageCharWidth(),
            max([self.graph_labels.needed_width(), *(v.needed_width() for v in self.views)])
            + self._chrome_width()))

    def wanted_width(self) -> int:
        """The width the panel shows best at: its views' text unfolded (the activity's values
        on one line); the grid's columns are this wide where the viewport has room."""
        return max([self.minimumWidth(),
                    *(v.wanted_width() + self._chrome_width() for v in self.views)])

    def _chrome_width(self) -> int:
        """Margins and frame around the panel's lines."""
        return MARGINS[0] + MARGINS[2] + 2 * self.frameWidth()

    def height_for(self, width: int, good: bool = False) -> int:
        """The least height the panel needs at ``width`` (its readings stacked when they do
        not fit side by side there), for the grid to choose its columns; ``good``: with
        graphs ``PLOT_GOOD_LINES`` tall instead of their least height."""
        layout = self.layout()
        assert layout is not None
        base = layout.minimumSize().height()
        if good:
            plot = self.memory_widget.minimumHeight()
            base += max(plot, PLOT_GOOD_LINES * self.fontMetrics().height()) - plot
        labels = self.graph_labels
        one = labels.sizeHint().height() // (2 if labels.stacked else 1)
        stacked = not labels.fits_side_by_side(width - self._chrome_width())
        return base + (one if stacked else 0) - (one if labels.stacked else 0)

    def plots(self) -> list[LitePlotWidget]:
        """The panel's graphs (the two of its own and any added to ``graphs``)."""
        return self.findChildren(LitePlotWidget)

    # -- public API --------------------------------------------------------------------------
    @property
    def lost(self) -> bool:
        return self._lost

    @property
    def stale(self) -> bool:
        return self._stale

    def add_memory_series(self, key: str, label: str, color: str, *,
                          style: Qt.PenStyle = Qt.PenStyle.SolidLine,
                          scale: float = GIB) -> pg.PlotCurveItem:
        """Plot History series ``key`` (bytes by default) on the memory graph at each refresh."""
        if self.memory_plot.legend is None:
            legend = self.memory_plot.addLegend(offset=(4, 4), labelTextSize="8pt")
            legend.addItem(self._mem_curve, tr("NVML used (all processes)"))
        curve = add_curve(self.memory_plot, color, label, style=style)
        self._series.append(_Series(key, curve, scale))
        self._drawn = False  # draw the new curve at the next update
        return curve

    def add_marker(self, t: float, text: str, color: str = "#555",
                   dark_color: str | None = None) -> pg.InfiniteLine:
        """A vertical line with a label on the memory graph at absolute time ``t``, in
        ``color`` (``dark_color``, when given, on a dark theme; the theme restyles it)."""
        # The label is a format string to pyqtgraph ({value}): braces in code are doubled.
        label = text.replace("{", "{{").replace("}", "}}")
        line = pg.InfiniteLine(pos=t - self._t_ref, angle=90, movable=False, label=label,
                               labelOpts={"position": 0.88, "movable": False})
        colors = (color, dark_color or color)
        setattr(line, MARKER_ATTR, colors)
        style_marker(line, colors[is_dark(self.palette())],
                     self.memory_widget.backgroundBrush().color())
        self.memory_plot.addItem(line, ignoreBounds=True)
        self._markers.append((t, line))
        if len(self._markers) > MAX_MARKERS:
            _, old = self._markers.pop(0)
            self.memory_plot.removeItem(old)
        return line

    def add_view(self, view: PanelView, *, above: bool = False) -> None:
        """Lay ``view`` out under the graphs (``above``: under the title), updated and drawn
        with them (panel_view.py)."""
        self.views.append(view)
        if above:
            self._layout.insertWidget(1, view)
        else:
            self._layout.addWidget(view, 1)
        self._drawn = False
        self._fit_to_font()

    def remove_view(self, view: PanelView) -> None:
        if view in self.views:  # the caller deletes it
            self.views.remove(view)
            self._layout.removeWidget(view)
            self._fit_to_font()

    def set_window(self, window_s: float) -> None:
        self._window_s = float(window_s)
        self._drawn = False
        for plot in (self.memory_plot, self.util_plot):
            plot.setXRange(-self._window_s, 0, padding=0)

    def set_stale(self, stale: bool) -> None:
        """Grey the panel out while no fresh data arrives."""
        if stale != self._stale:
            self._stale = stale
            if self._opacity is None:
                self._opacity = QGraphicsOpacityEffect(self)
                self._opacity.setOpacity(0.4)
                self.setGraphicsEffect(self._opacity)
            self._opacity.setEnabled(stale)

    @property
    def x_origin_s(self) -> float:
        """The absolute time (epoch seconds) at x = 0 of the graphs: the newest sample
        drawn; 0 before the first drawing."""
        return self._t_ref

    def update_view(self, sample: GpuSample | None, t_ref: float, series: SeriesFn, *,
                    curves: bool = True) -> None:
        """Show ``sample`` and redraw the curves from ``series(gpu, key) -> (times, values)``;
        with ``curves=False`` only the readouts (for a panel that is not on screen)."""
        self._update_labels(sample)
        for view in self.views:
            view.show_sample(sample)
        if not curves or not self._moved_enough(t_ref):
            return
        self._drawn = True
        self._t_ref = t_ref
        if self.crosshair.x is not None:  # a still pointer: the time under it moved on
            self.hovered.emit(self.index, self._t_ref + self.crosshair.x)
        self._set_curve(self._mem_curve, series, "mem_used_bytes", GIB)
        self._set_curve(self._gpu_curve, series, "gpu_util_pct", 1.0)
        self._set_curve(self._memu_curve, series, "mem_util_pct", 1.0)
        for s in self._series:
            self._set_curve(s.curve, series, s.key, s.scale)
        if self.stack is not None:  # memory by process: bands drawn from the History
            self.stack(t_ref, self._window_s)
        for view in self.views:
            view.draw(series, t_ref)
        for t, line in self._markers:
            line.setValue(t - self._t_ref)
        total = sample.mem_total_bytes if sample is not None and not sample.lost else None
        if total is None:
            total = self.info.mem_total_bytes
        top = total / GIB if total else None
        if top == self._y_total:
            return  # ranges set explicitly and only on change: no range work per tick
        self._y_total = top
        if top is not None:
            self._total_line.setValue(top)
            self._total_line.show()
            self.memory_plot.setYRange(0, top * 1.04, padding=0)
        else:
            self._total_line.hide()
            self.memory_plot.enableAutoRange(y=True)

    def curve_lag(self, t_ref: float) -> float:
        """How many pixels the newest sample at ``t_ref`` lies right of the newest one drawn
        (timer jitter included); ``inf`` when the curves must be drawn anyway (never drawn
        since the last change of layout, window or series, or time went backwards: the
        drawn origin may lie up to half a device pixel ahead of the newest sample)."""
        px_per_s = self.pixels_per_s()
        lag = (t_ref - self._t_ref + JITTER_S) * px_per_s
        return lag if self._drawn and px_per_s > 0.0 and lag > -1.0 else float("inf")

    def pixels_per_s(self) -> float:
        """Width of one second on the time axis, in pixels (0 before the first layout)."""
        width = self.memory_plot.getViewBox().width()
        return width / self._window_s if width > 0 and self._window_s > 0 else 0.0

    def _moved_enough(self, t_ref: float) -> bool:
        """True when the newest sample lies at least half a pixel to the right of the newest
        one drawn: a 5-minute window on a 300-px plot is 1 s per pixel, so at 0.1 s the
        curves are redrawn every 5th tick (the readouts every tick); finer steps would not
        show. A 1-minute window at 0.1 s still redraws every tick."""
        return self.curve_lag(t_ref) >= 0.5

    def hover_at(self, x_rel: float) -> None:
        """Show the crosshair at ``x_rel`` seconds from now and emit ``hovered`` (the readout
        goes beside the pointer, or mid-height on the crosshair when no pointer moved)."""
        self.crosshair.show_at(x_rel)
        self.hovered.emit(self.index, self._t_ref + x_rel)

    def clear_hover(self) -> None:
        """Hide the crosshair and the readout; ``unhovered`` tells the window."""
        if self.crosshair.clear():
            self.unhovered.emit(self.index)

    def show_readout(self, heading: str, lines: list[str]) -> None:
        """The values under the pointer, in a box beside it over the graph (panel_hover.py)."""
        self.crosshair.show_readout(heading, lines)

    @property
    def readout(self) -> HoverBox | None:
        return self.crosshair.box

    # -- internals ---------------------------------------------------------------------------
    def _set_curve(self, curve: pg.PlotCurveItem, series: SeriesFn, key: str,
                   scale: float) -> None:
        try:
            t, v = series(self.index, key)
        except KeyError:
            t, v = np.empty(0), np.empty(0)
        px_per_s = self.pixels_per_s()  # one block of the decimation a pixel column
        set_series(curve, t, np.asarray(v, dtype=float) / scale, self._t_ref,
                   1.0 / px_per_s if px_per_s > 0 else 0.0)

    def _update_labels(self, s: GpuSample | None) -> None:
        lost = s is not None and s.lost
        if lost != self._lost:
            self._lost = lost
            if lost and not self.lost_label.styleSheet():
                self.lost_label.setStyleSheet(f"color: white; background: {LOST_COLOR}; "
                                              "font-weight: bold; padding: 3px;")
            self.lost_label.setVisible(lost)
            self.setStyleSheet(f"GpuPanel {{ border: 2px solid {LOST_COLOR}; }}" if lost else "")
        if lost and s is not None:
            text = tr("LOST — {reason}",
                      reason=s.message or tr("the GPU stopped answering"))
            self.lost_label.setText(text)
            self.lost_label.setToolTip(text)

        memory = memory_runs(s)
        self.mem_label.set_runs(memory, memory_forms(memory))
        self.util_label.set_runs(util_runs(s))
        readouts = [TextRun(text, bold=bold) for text, bold in readout_line(s)]
        self.readouts.set_runs(readouts, item_forms(readouts))
        self._tip_sample = s  # the tooltip is made from it when it is shown (lazy_tip.py)
