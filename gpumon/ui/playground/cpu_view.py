"""The playground's graph on a machine without a GPU: the kernel process's main memory.

Without GPUs the Playground's right half said "No GPUs to show." and stayed empty. This
view shows, live, the resident memory (RSS) of the playground's kernel, the child process
where torch runs, and the bytes of the named tensors on the cpu in its workspace (torch does
not report its CPU allocator; the workspace sizes are what the kernel reports), with a
marker for each action at the moment it ran: creating a big CPU tensor visibly lifts both
lines, as ``x.cuda(0)`` lifts the GPU lines on a GPU machine. It is titled as the CPU,
never as a GPU. RSS is read by :class:`~gpumon.telemetry.procs.rss.RssProbe` on its own
thread; this view only draws, every ``REDRAW_MS`` while shown.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QTimer
from PySide6.QtGui import QHideEvent, QShowEvent
from PySide6.QtWidgets import QFrame, QSizePolicy, QVBoxLayout, QWidget

from gpumon.i18n import N_, tr
from gpumon.playground.data.outcome import Outcome, WorkspacePage
from gpumon.telemetry.procs.rss import RssProbe
from gpumon.ui.playground.style import ERROR_COLOR, marker_tip, short_code, show_tip
from gpumon.ui.widgets.axis import TimeAxis
from gpumon.ui.widgets.plot import LitePlotWidget
from gpumon.ui.widgets.plot_style import MARKER_ATTR, style_marker
from gpumon.ui.widgets.runs_label import RunsLabel, TextRun
from gpumon.ui.widgets.seen import window_seen
from gpumon.ui.widgets.theme import is_dark
from gpumon.units import GIB, format_bytes

RSS_COLOR = "#1f77b4"
TENSORS_COLOR = "#d62728"
MARKER_COLOR = "#555555"
WINDOW_S = 120.0
REDRAW_MS = 500
MAX_MARKERS = 200
CPU_TITLE = N_("CPU · main memory of the playground's kernel process")


def _literal(text: str) -> str:
    """``text`` as pyqtgraph's marker label shows it: the label is a format string (its
    ``{value}``), so code such as ``d = {1: 2}`` needs its braces doubled."""
    return text.replace("{", "{{").replace("}", "}}")


def steps(points: Sequence[tuple[float, float]], now: float) -> tuple[np.ndarray, np.ndarray]:
    """A value that changes at ``points`` [(time, value)] and holds until ``now``, as the
    corners of a step line (it jumps at each change instead of sloping to it)."""
    xs: list[float] = []
    ys: list[float] = []
    for i, (t, v) in enumerate(points):
        if i:
            xs.append(t)
            ys.append(points[i - 1][1])
        xs.append(t)
        ys.append(v)
    xs.append(now)
    ys.append(points[-1][1])
    return np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)


class CpuMemoryView(QFrame):
    """RSS and named CPU tensors of the kernel process, live, with the actions' markers."""

    def __init__(self, pid: Callable[[], int | None], parent: QWidget | None = None, *,
                 interval_s: float = 0.5) -> None:
        super().__init__(parent)
        self.setObjectName("cpuMemoryView")
        self.setAccessibleName(tr("CPU memory of the playground kernel"))
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self._pid = pid
        self.probe = RssProbe(pid, interval_s)
        self._tensors: list[tuple[float, float]] = []  # (time, bytes of named cpu tensors)
        self._markers: list[tuple[float, pg.InfiniteLine]] = []
        self.title = RunsLabel()
        self.title.setObjectName("cpuMemoryTitle")
        self.readout = RunsLabel()
        self.readout.setObjectName("cpuMemoryReadout")
        self.widget = LitePlotWidget(background="w", bottom=TimeAxis)
        self.widget.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.plot = self.widget.getPlotItem()
        self.plot.getViewBox().setMouseEnabled(x=False, y=False)
        self.plot.showGrid(x=True, y=True, alpha=0.25)
        self.plot.setLabel("left", "GiB")
        self.plot.setXRange(-WINDOW_S, 0, padding=0)
        self.plot.getViewBox().enableAutoRange(y=False)  # from 0, like the GPU graphs
        self._top = 0.0
        for side in ("left", "bottom"):
            axis = self.plot.getAxis(side)
            if axis is not None:
                axis.setStyle(maxTickLevel=1)  # grid at major and minor ticks only
        legend = self.plot.addLegend(offset=(4, 4))
        legend.anchor(itemPos=(0, 1), parentPos=(0, 1), offset=(4, -4))
        self.rss_curve = self.plot.plot([], [], pen=pg.mkPen(RSS_COLOR, width=1.5),
                                        name=tr("RSS: the kernel process's resident memory"))
        self.tensor_curve = self.plot.plot([], [], pen=pg.mkPen(TENSORS_COLOR, width=1.5),
                                           name=tr("named tensors on the cpu (workspace)"))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 4)
        layout.addWidget(self.title)
        layout.addWidget(self.readout)
        layout.addWidget(self.widget, 1)
        self._timer = QTimer(self)
        self._timer.setInterval(REDRAW_MS)
        self._timer.timeout.connect(self._on_timer)
        self._set_title()

    # -- feeding ------------------------------------------------------------------------------
    def set_workspace(self, page: WorkspacePage) -> None:
        """The workspace changed: the bytes of its tensors on the cpu (all of them, listed
        in the table or not), from now on."""
        total = float(page.cpu_tensor_bytes)
        self._tensors.append((time.time(), total))
        del self._tensors[:-1000]

    def add_outcome(self, outcome: Outcome) -> None:
        """A marker for an action at the moment it ran (red when torch raised)."""
        color = ERROR_COLOR if not outcome.ok else MARKER_COLOR
        line = pg.InfiniteLine(pos=outcome.started_at - time.time(), angle=90, movable=False,
                               label=_literal(short_code(outcome.code)),
                               labelOpts={"position": 0.9 - 0.12 * (len(self._markers) % 4),
                                          "movable": False})
        setattr(line, MARKER_ATTR, (color, "#d0d0d0" if color == MARKER_COLOR else color))
        style_marker(line, color if not is_dark(self.palette()) else getattr(
            line, MARKER_ATTR)[1], self.widget.backgroundBrush().color())
        show_tip(line, marker_tip(outcome, "cpu"))
        self.plot.addItem(line, ignoreBounds=True)
        self._markers.append((outcome.started_at, line))
        if len(self._markers) > MAX_MARKERS:
            _, old = self._markers.pop(0)
            self.plot.removeItem(old)
        self.redraw()

    def markers(self) -> tuple[pg.InfiniteLine, ...]:
        """The action markers on the graph, oldest first (at most ``MAX_MARKERS``)."""
        return tuple(line for _, line in self._markers)

    # -- drawing ------------------------------------------------------------------------------
    def _on_timer(self) -> None:
        if window_seen(self):  # minimised: the next tick after it is restored draws
            self.redraw()

    def redraw(self) -> None:
        """Curves, markers and the readout, relative to now."""
        now = time.time()
        t, rss = self.probe.series(since=now - WINDOW_S - 5)
        self.rss_curve.setData(t - now, rss / GIB)
        if self._tensors:
            tt, tv = steps(self._tensors, now)
            self.tensor_curve.setData(tt - now, tv / GIB)
        for started, line in self._markers:
            line.setValue(started - now)
        highest = max([float(np.max(rss)) if len(rss) else 0.0]
                      + [v for _, v in self._tensors]) / GIB
        top = max(0.25, 2 ** np.ceil(np.log2(highest * 1.15))) if highest > 0 else 0.25
        if top != self._top:  # powers of two: the range changes only now and then
            self._top = top
            self.plot.setYRange(0, top, padding=0)
        self._set_title()
        runs = [TextRun("■", color=RSS_COLOR), TextRun(" RSS "),
                TextRun(format_bytes(rss[-1] if len(rss) else None), bold=True),
                TextRun("   "), TextRun("■", color=TENSORS_COLOR),
                TextRun(" " + tr("named cpu tensors") + " "),
                TextRun(format_bytes(self._tensors[-1][1]) if self._tensors else tr("none"),
                        bold=True)]
        self.readout.set_runs(runs)

    def _set_title(self) -> None:
        pid = self._pid()
        self.title.set_runs([TextRun("CPU", bold=True),
                             TextRun(tr(CPU_TITLE).removeprefix("CPU")),
                             TextRun(f" (PID {pid})" if pid else " " + tr("(starting…)"),
                                     color="#777")])

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.probe.start()
        self._timer.start()
        self.redraw()

    def hideEvent(self, event: QHideEvent) -> None:
        self._timer.stop()
        self.probe.stop()
        super().hideEvent(event)

    def legend_names(self) -> list[str]:
        legend = self.plot.legend
        return [] if legend is None else [label.text for _, label in legend.items]


