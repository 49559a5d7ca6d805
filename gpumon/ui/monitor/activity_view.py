"""A GPU panel's activity view: how busy the GPU really is, beside GPU-Util.

View ▸ Activity (and the utilization graph's context menu) turns it on for every panel; the
choice is remembered (``panel_options.ActivityViews``). Under the panel's two graphs it
draws GPM's SM activity, SM occupancy, tensor and DRAM activity as lines (0-100 %) with
GPU-Util, from the History as the panel's own curves, on the panel's time axis, with the
same hover (the crosshair, the toolbar's readout). Above the graph the current values; under
it one or two sentences that say what they mean (``model/activity.py: meaning``), or, on a
GPU without activity, why in one line (``why_empty``). The view is a ``PanelView``: the
panel updates it exactly when it updates itself, so a view no one sees costs nothing
(grid.py).

Readable at 300 %: its graph is as tall as the panel's (five tick-label lines at least), its
sentence has two lines of its own, and the panel's minimum height counts both (the grid then
scrolls rather than squeeze them). The values take two lines where one is too narrow for them
(``ValueLines``): at 300 % their one line (1431 px) made each panel wider than the grid's
1378 px, and the Monitor scrolled sideways with the right graph cut (issue 54, item 2).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, QPointF, QRect, QSize, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QVBoxLayout, QWidget

from gpumon.i18n import N_, tr
from gpumon.telemetry.model.activity import meaning_of, percent, why_empty
from gpumon.telemetry.model.types import GpuSample
from gpumon.ui.monitor.panel import PLOT_MIN_LINES, GpuPanel
from gpumon.ui.monitor.panel_labels import GPU_UTIL_COLOR
from gpumon.ui.monitor.panel_plots import PLOT_MIN_HEIGHT, add_curve, make_plot
from gpumon.ui.monitor.panel_view import PanelView, SeriesFn
from gpumon.ui.widgets.curve import set_series
from gpumon.ui.widgets.field import Field
from gpumon.ui.widgets.plot import LitePlot
from gpumon.ui.widgets.runs_label import RunsLabel, TextRun, runs_width
from gpumon.units import NA

NO_SERIES = N_("The server sends no activity series (DCGM_FI_PROF_*) for this GPU.")
NOTE_LINES = 2  # the sentence's lines: the longest rule's two sentences fit at 300 %
# (GpuSample field, colour, name on the label, pen style): GPU-Util as on the panel's graph.
LINES: tuple[tuple[str, str, str, Qt.PenStyle], ...] = (
    ("gpu_util_pct", GPU_UTIL_COLOR, "GPU", Qt.PenStyle.SolidLine),
    ("sm_active_pct", "#1f77b4", N_("SM"), Qt.PenStyle.SolidLine),
    ("sm_occupancy_pct", "#17becf", N_("Occ."), Qt.PenStyle.DashLine),  # fits at 300 %
    ("tensor_active_pct", "#d62728", N_("Tensor"), Qt.PenStyle.SolidLine),
    ("dram_active_pct", "#ff7f0e", "DRAM", Qt.PenStyle.SolidLine),
)
#: The values' tooltip: what each line is (docs/gpu-activity.md says more).
LINES_TIP = N_("GPU: GPU-Util, a GPU kernel was running (any, however small)\n"
               "SM: the share of the SMs with at least one warp, averaged over the SMs\n"
               "Occ.: SM occupancy, the warps resident on the SMs as a share of the most they "
               "can hold\n"
               "Tensor: any tensor-core pipe was busy\n"
               "DRAM: device memory was sending or receiving data\n"
               "Each is a share of the time between two readings (GPM).")


def value_runs(sample: GpuSample | None, widest: bool = False) -> list[TextRun]:
    """The label above the graph: ``■ GPU 100 %  ■ SM 96 %  ■ Occupancy 14 %  …``;
    ``widest``: every value at its widest, for the width the label needs."""
    runs: list[TextRun] = []
    for key, color, name, _ in LINES:
        v = None if sample is None or sample.lost else getattr(sample, key)
        text = max(percent(100.0), percent(99.9), NA, key=len) if widest else (
            NA if v is None else percent(v))
        runs += [TextRun(("  " if runs else "") + "■", color=color),
                 TextRun(f" {tr(name)} "), TextRun(text, bold=True)]
    return runs


FIRST_LINE = 3  # values on the first of two lines: GPU, SM, Occ. | Tensor, DRAM


def split_runs(runs: list[TextRun]) -> tuple[list[TextRun], list[TextRun]]:
    """``value_runs`` as two lines: the first ``FIRST_LINE`` values, and the rest (without
    the space that led into them)."""
    cut = 3 * FIRST_LINE
    rest = runs[cut:]
    if rest:
        rest[0] = TextRun(rest[0].text.lstrip(), rest[0].bold, rest[0].color)
    return runs[:cut], rest


class ValueLines(QWidget):
    """The values, on one line where the widget is as wide as their widest line, on two
    (``first`` over ``second``) where it is not. Like ``field.Field`` it has no layout: a new
    reading repaints the labels, and only a change of arrangement lays the panel out."""

    def __init__(self, first: RunsLabel, second: RunsLabel) -> None:
        super().__init__()
        self.first, self.second = first, second
        first.setParent(self)
        second.setParent(self)
        self.two_lines = False
        second.hide()
        self._runs: list[TextRun] = []
        self._widest: tuple[str, tuple[float, float, float]] | None = None
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)

    def widest(self) -> tuple[float, float, float]:
        """The widest one line, first line and second line, in the current font."""
        font = self.first.font()
        key = font.key() + tr(LINES[1][2])  # the font and the language
        if self._widest is None or self._widest[0] != key:
            runs = value_runs(None, widest=True)
            one, two = split_runs(runs)
            self._widest = (key, (runs_width(runs, font), runs_width(one, font),
                                  runs_width(two, font)))
        return self._widest[1]

    def set_values(self, runs: list[TextRun]) -> None:
        """Show ``runs`` (``value_runs``), on the lines of the present arrangement."""
        self._runs = runs
        if self.two_lines:
            one, two = split_runs(runs)
            self.first.set_runs(one)
            self.second.set_runs(two)
        else:
            self.first.set_runs(runs)

    def needed_width(self) -> int:
        return int(max(self.widest()[1:])) + 4

    def _line(self) -> int:
        return self.first.sizeHint().height()

    def sizeHint(self) -> QSize:
        return QSize(int(self.widest()[0]) + 4, self._line() * (2 if self.two_lines else 1))

    def minimumSizeHint(self) -> QSize:
        return QSize(self.needed_width(), self.sizeHint().height())

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.LanguageChange):
            self._arrange()
            self.updateGeometry()

    def resizeEvent(self, event: QResizeEvent) -> None:
        self._arrange()

    def _arrange(self) -> None:
        two = self.width() < self.widest()[0] + 4
        if two != self.two_lines:
            self.two_lines = two
            self.second.setVisible(two)
            self.set_values(self._runs)
            self.updateGeometry()  # one line more or less: the panel lays out once
        line = self._line()
        self.first.setGeometry(QRect(0, 0, self.width(), line))
        self.second.setGeometry(QRect(0, line, self.width(), line))


def note_text(sample: GpuSample | None) -> str:
    """Under the graph: what the figures mean, or why there are none (one line)."""
    if sample is None or sample.lost:
        return ""
    why = why_empty(sample.activity_state)
    if why:
        return why
    if sample.activity_state is None and sample.sm_active_pct is None:
        return tr(NO_SERIES)  # a Prometheus server without the profiling series
    return meaning_of(sample)


class _Note(QLabel):
    """Wrapped text in a height of its own: no height-for-width (a panel never lays its grid
    out at a label's preferred height, panel.py says why); a longer text is cut, the tooltip
    has it whole."""

    def hasHeightForWidth(self) -> bool:
        return False


class ActivityView(PanelView):
    """The activity of ``panel``'s GPU; ``panel.add_view`` lays it out and feeds it."""

    def __init__(self, panel: GpuPanel) -> None:
        super().__init__()
        self.panel = panel
        self.setObjectName(f"activityView{panel.index}")
        self.setAccessibleName(tr("GPU {index} activity", index=panel.index))
        self._t_ref = 0.0
        self._sample: GpuSample | None = None
        self.label = RunsLabel()
        self.label.setObjectName(f"activityValues{panel.index}")
        self.label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.label.setToolTip(tr(LINES_TIP))
        self.label2 = RunsLabel()  # the values' second line, where one is too narrow
        self.label2.setObjectName(f"activityValuesMore{panel.index}")
        self.label2.setToolTip(tr(LINES_TIP))
        self.values = ValueLines(self.label, self.label2)
        self.note = _Note()
        self.note.setObjectName(f"activityNote{panel.index}")
        self.note.setWordWrap(True)
        self.note.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.note.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.note_field = Field(self.note)
        self.plot_widget = make_plot("%")  # as the panel's graphs are made (panel_plots.py)
        self.plot_widget.setObjectName(f"activityPlot{panel.index}")
        self.plot: LitePlot = self.plot_widget.getPlotItem()
        self._follow_panel_window()
        self.curves: dict[str, pg.PlotCurveItem] = {
            key: add_curve(self.plot, color, tr(name), style=style)
            for key, color, name, style in LINES}
        self._cross = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen("#999", width=1))
        self.plot.addItem(self._cross, ignoreBounds=True)
        self._cross.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.values)
        layout.addWidget(self.plot_widget, 1)
        layout.addWidget(self.note_field)
        self.plot_widget.viewport().installEventFilter(self)
        self.plot_widget.scene().sigMouseMoved.connect(self._on_mouse_moved)
        panel.hovered.connect(self._on_hovered)
        panel.unhovered.connect(self._on_unhovered)
        self._fit_to_font()

    def _follow_panel_window(self) -> None:
        """As the panel's utilization graph: 0-100 %, and the panel's time window."""
        plot = self.plot
        plot.setYRange(0, 100, padding=0.02)
        plot.getViewBox().setLimits(yMin=-2, yMax=102)
        # The panel's time window, always. Not setXLink: pyqtgraph lines linked views up
        # by their place on the screen, and this graph is wider than the panel's (at 100 %
        # it showed 280 s where the panel's showed 300).
        panel_vb = self.panel.util_plot.getViewBox()
        plot.setXRange(*panel_vb.viewRange()[0], padding=0)
        panel_vb.sigXRangeChanged.connect(self._follow_window)

    # -- PanelView ----------------------------------------------------------------------------
    def show_sample(self, sample: GpuSample | None) -> None:
        self._sample = sample
        self.values.set_values(value_runs(sample))
        text = note_text(sample)
        if text != self.note.text():  # a label's text and tooltip only when they change
            self.note.setText(text)
            self.note.setToolTip(text)

    def draw(self, series: SeriesFn, t_ref: float) -> None:
        self._t_ref = t_ref
        width = self.plot.getViewBox().width()
        window = self.panel.util_plot.getViewBox().viewRange()[0]
        span = window[1] - window[0]
        block_s = span / width if width > 0 and span > 0 else 0.0  # a pixel column
        for key, curve in self.curves.items():
            try:
                t, v = series(self.panel.index, key)
            except KeyError:
                t, v = np.empty(0), np.empty(0)
            set_series(curve, t, np.asarray(v, dtype=float), t_ref, block_s)

    def needed_width(self) -> int:
        """Its values' longer line whole (on two lines), every value at its widest."""
        return self.values.needed_width()

    def wanted_width(self) -> int:
        """Its values on one line, every value at its widest: the sentence under the graph
        then fits its two lines too."""
        return int(self.values.widest()[0]) + 4

    def needed_height(self, line_height: int) -> int:
        """Its values' lines, a graph of the panel's graphs' height, the sentence's lines."""
        lines = (2 if self.values.two_lines else 1) + NOTE_LINES
        return lines * line_height + self._plot_height(line_height) + 8

    # -- Qt -----------------------------------------------------------------------------------
    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:  # the zoom
            self._fit_to_font()

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Leave:
            self.panel.clear_hover()  # as the panel's own graphs: no crosshair, no readout
        return super().eventFilter(obj, event)

    # -- internals ----------------------------------------------------------------------------
    @staticmethod
    def _plot_height(line_height: int) -> int:
        return max(PLOT_MIN_HEIGHT, PLOT_MIN_LINES * line_height)

    def _fit_to_font(self) -> None:
        fm = self.fontMetrics()
        self.plot_widget.setMinimumHeight(self._plot_height(fm.height()))
        self.note_field.setFixedHeight(NOTE_LINES * fm.lineSpacing() + 4)

    def _on_mouse_moved(self, pos: QPointF) -> None:
        vb = self.plot.getViewBox()
        if not vb.sceneBoundingRect().contains(pos):
            self.panel.clear_hover()
            return
        x = float(vb.mapSceneToView(pos).x())
        low, _ = self.panel.util_plot.getViewBox().viewRange()[0]
        if low <= x <= 0:
            self.panel.hover_at(x)  # the crosshair on all three graphs, the readout

    def _follow_window(self, _vb: object, x_range: tuple[float, float]) -> None:
        self.plot.setXRange(*x_range, padding=0)

    def crosshair_x(self) -> float | None:
        """Where the crosshair stands (seconds from the newest sample), None when hidden."""
        return float(self._cross.value()) if self._cross.isVisible() else None

    def _on_hovered(self, _gpu: int, t: float) -> None:
        self._cross.setValue(t - self._t_ref)
        self._cross.show()

    def _on_unhovered(self, _gpu: int) -> None:
        self._cross.hide()
