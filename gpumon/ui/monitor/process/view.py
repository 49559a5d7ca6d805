"""A process's own window: its command line, user, start, container or job and parent, and
live graphs of its GPU memory and SM % on each GPU it uses, its host CPU % and host memory.

It draws a ProcessTrace (telemetry/history/process_trace.py) over the toolbar's time window: first
what the History kept of the process (so it opens with the time before it opened), then the
window's snapshots; after the process ends it stays, marked "exited" with the time. While
its window is minimised the trace grows but the graphs wait; they are drawn when it is
restored.

Like a GPU panel: the time axis counts back to "now" (``TimeAxis``), each graph's title
carries its newest numbers, a memory graph is in the unit its highest value reads in (MiB or
GiB, as ``format_bytes`` writes it), and a pointer over a graph puts a crosshair on all four
and the readings at that time beside it. Esc and Ctrl+W close the window.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, QPoint, QPointF, QSize, Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QFrame, QGridLayout, QLabel, QSizePolicy, QVBoxLayout, QWidget

from gpumon.i18n import tr
from gpumon.telemetry.history.process_trace import ProcessTrace, Series
from gpumon.telemetry.history.store import History
from gpumon.telemetry.model.types import GpuProcess, Snapshot
from gpumon.ui.monitor.process.readout import current_values, memory_unit, readings_at
from gpumon.ui.widgets.axis import TimeAxis, next_nice, time_label
from gpumon.ui.widgets.close_keys import close_on_keys
from gpumon.ui.widgets.plot import LitePlot, LitePlotWidget
from gpumon.ui.widgets.refit import Refit
from gpumon.ui.widgets.runs_label import RunsLabel, TextRun
from gpumon.ui.widgets.screen_fit import room_for
from gpumon.ui.widgets.seen import SeenWatch, window_seen
from gpumon.units import NA, format_clock
from gpumon.untrusted import for_terminal

COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
          "#7f7f7f")
MEMORY = ("gpu_mem", "rss")  # graphs of bytes, in the unit of their highest value


def _stamp(t: float | None) -> str:
    return NA if t is None else time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))


def _parent(pid: int) -> str:
    """``PID (name)`` of the process's parent, read once; N/A when it cannot be seen."""
    import psutil  # here: not imported before the window's first frame

    try:
        parent = psutil.Process(pid).parent()
        return NA if parent is None else f"{parent.pid} ({for_terminal(parent.name())})"
    except psutil.Error:
        return NA


def _xy(series: Series, now: float) -> tuple[np.ndarray, np.ndarray]:
    x = np.fromiter((t - now for t, _ in series), float, len(series))
    y = np.fromiter((math.nan if v is None else v for _, v in series), float, len(series))
    return x, y


def _top(points: list[tuple[np.ndarray, np.ndarray]], window_s: float) -> float:
    """The highest finite value shown (x within the window), 0 when there is none."""
    seen = [y[(x >= -window_s) & np.isfinite(y)] for x, y in points]
    return max((float(v.max()) for v in seen if v.size), default=0.0)


class ProcessView(QWidget):
    """The view of one process; ``add(snapshot)`` on every tick, ``set_window(seconds)``.
    ``simulated``: say so; ``local``: the process runs on this machine (NVML); ``history``:
    where its earlier points are (and how many to keep: its capacity)."""

    def __init__(self, process: GpuProcess, window_s: int, parent: QWidget | None = None,
                 *, simulated: bool = False, local: bool = False,
                 history: History | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        self.setObjectName("processView")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.trace = ProcessTrace(process.pid, history.capacity if history else 3600)
        if history is not None:
            self.trace.fill_from(history, process)
        self._now: float | None = history.latest_time() if history is not None else None
        self.window_s = window_s
        self.simulated = simulated  # a simulated source's process: said in the title and view
        self.setWindowTitle(tr("Process {pid}", pid=process.pid) + (
            " [" + tr("SIMULATED") + "]" if simulated else ""))
        self.details = QLabel(self)
        self.details.setTextFormat(Qt.TextFormat.PlainText)
        self.details.setWordWrap(True)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.status = QLabel(tr("SIMULATED") if simulated else "", self)
        self.status.setObjectName("processExited")
        # Its parent from this machine's /proc: only for this machine's own processes (a
        # simulated PID or another machine's is some other program here, or none).
        self._parent = _parent(process.pid) if local else NA
        self._exit_shown = False
        self.plots: dict[str, LitePlotWidget] = {}
        self.titles: dict[str, RunsLabel] = {}
        self._names = {"gpu_mem": tr("GPU memory"), "sm": tr("SM %"), "cpu": tr("CPU %"),
                       "rss": tr("Host memory")}
        self.units: dict[str, str] = {"sm": "%", "cpu": "%"}
        self._scales: dict[str, float] = {"sm": 1.0, "cpu": 1.0}
        self._tops: dict[str, float] = {}
        self._cross: dict[str, pg.InfiniteLine] = {}
        self._hover: tuple[str, float, QPoint | None] | None = None  # graph, x, pointer
        # The readings beside the pointer: a label over the graph (above its legend, in the
        # theme's tooltip colours and the zoom's font), moved from graph to graph.
        self.tip = QLabel(self)
        self.tip.setObjectName("processHoverReadout")
        self.tip.setTextFormat(Qt.TextFormat.PlainText)
        self.tip.setFrameShape(QFrame.Shape.Box)
        self.tip.setAutoFillBackground(True)
        self.tip.setBackgroundRole(QPalette.ColorRole.ToolTipBase)
        self.tip.setForegroundRole(QPalette.ColorRole.ToolTipText)
        self.tip.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.tip.setMargin(3)
        self.tip.hide()
        grid = QGridLayout()
        for i, key in enumerate(self._names):
            box = QVBoxLayout()
            box.setSpacing(0)
            self.titles[key] = RunsLabel(self)
            self.titles[key].setObjectName(f"processTitle_{key}")
            # cut with "…" (whole in its tooltip) rather than widen its column
            self.titles[key].setSizePolicy(QSizePolicy.Policy.Ignored,
                                           QSizePolicy.Policy.Preferred)
            box.addWidget(self.titles[key])
            box.addWidget(self._make_plot(key), 1)
            grid.addLayout(box, i // 2, i % 2)
            grid.setColumnStretch(i % 2, 1)
            grid.setRowStretch(i // 2, 1)
        layout = self._layout = QVBoxLayout(self)
        layout.addWidget(self.details)
        layout.addWidget(self.status)
        layout.addLayout(grid, 1)
        close_on_keys(self)
        self._describe(process)
        self._show_titles()
        self._fit_to_font()
        Refit(self, self._fit_to_font)  # the zoom: once the titles have it too
        self._behind = False  # ticks came while no one could see the graphs
        self._seen_watch = SeenWatch(self, self._catch_up)
        if self._now is not None:
            self._draw(self._now)

    def _fit_to_font(self) -> None:
        """Room for the text and the graphs in this font (at 300 % the 760 px window of
        100 % showed one graph, cut): graphs five tick labels tall, two titles side by side
        whole, the window as large as the font asks, within the screen with its frame (it
        measured 1272 x 1113 on a 1080 px screen at 300 %, its lower graphs off it). Where
        the screen is too small for that, the graphs give up height, down to three lines."""
        fm = self.fontMetrics()
        titles = max((label.full_width() for label in self.titles.values()), default=0.0)
        want = QSize(max(760, 64 * fm.averageCharWidth(), int(2 * titles) + 6 * fm.height()),
                     max(560, 34 * fm.height()))
        graph = QSize(max(260, 24 * fm.averageCharWidth()), max(160, 5 * fm.height()))
        room = room_for(self)
        if room is not None:
            want = want.boundedTo(room)
            for widget in self.plots.values():
                widget.setMinimumSize(graph)
            need = self._layout.totalMinimumSize()  # two graphs a column, a row
            over = need - room
            graph = QSize(max(3 * fm.height(), graph.width() - max(0, over.width()) // 2 - 1),
                          max(3 * fm.height(), graph.height() - max(0, over.height()) // 2 - 1))
        for widget in self.plots.values():
            widget.setMinimumSize(graph)
        self.resize(want)

    def _make_plot(self, key: str) -> LitePlotWidget:
        widget = LitePlotWidget(background="w", bottom=TimeAxis)  # "−60 s" … "now"
        item = widget.getPlotItem()
        item.getViewBox().setMouseEnabled(x=False, y=False)
        item.getViewBox().enableAutoRange(y=False)  # from 0, set at each draw
        item.setLabel("left", self.units.get(key, "MiB"))
        item.showGrid(x=True, y=True, alpha=0.3)
        if key in ("gpu_mem", "sm"):  # a curve per GPU: say which is which
            item.addLegend(offset=(8, 8))
        cross = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen("#999", width=1))
        cross.hide()
        item.addItem(cross, ignoreBounds=True)
        self.plots[key], self._cross[key] = widget, cross
        widget.scene().sigMouseMoved.connect(lambda pos, k=key: self._on_mouse_moved(k, pos))
        widget.viewport().installEventFilter(self)
        return widget

    def set_window(self, window_s: int) -> None:
        """Show the last ``window_s`` seconds (now, not at the next tick: the window may be
        paused)."""
        self.window_s = window_s
        if self._now is not None:
            self._draw(self._now)

    def add(self, snap: Snapshot) -> None:
        was_running = self.trace.exited_s is None
        self.trace.add(snap)
        if self.trace.latest is not None and was_running:
            self._describe(self.trace.latest)
        if self.trace.exited_s is not None and not self._exit_shown:
            self._exit_shown = True
            self.status.setText(" · ".join(t for t in (
                tr("SIMULATED") if self.simulated else "",
                tr("Exited at {time}.", time=_stamp(self.trace.exited_s))) if t))
        self._show_titles()
        if self.isVisible() and not window_seen(self):  # minimised: drawn when restored
            self._now, self._behind = snap.timestamp_s, True
            return
        self._draw(snap.timestamp_s)

    # -- the pointer -------------------------------------------------------------------------
    @property
    def hover_text(self) -> str:
        """The readings beside the pointer ("" when it is on no graph)."""
        return self.tip.text() if self._hover is not None else ""

    def hover_at(self, key: str, x_rel: float, pointer: QPoint | None = None) -> None:
        """A crosshair at ``x_rel`` seconds from now on every graph, and the readings at that
        time beside ``pointer`` (in graph ``key``'s coordinates; the crosshair's top when
        None)."""
        self._hover = (key, x_rel, pointer)
        for cross in self._cross.values():
            cross.setValue(x_rel)
            cross.show()
        self._show_tip()

    def crosshairs_shown(self) -> bool:
        """Whether every graph shows the hover's crosshair."""
        return bool(self._cross) and all(c.isVisible() for c in self._cross.values())

    def clear_hover(self) -> None:
        self._hover = None
        self.tip.hide()
        for cross in self._cross.values():
            cross.hide()

    def _show_tip(self) -> None:
        if self._hover is None or self._now is None:
            return
        key, x_rel, pointer = self._hover
        t = self._now + x_rel
        when = f"{time_label(round(x_rel, 1))} · {format_clock(t)}"
        self.tip.setText("\n".join([when, *readings_at(self.trace, t)]))
        self.tip.adjustSize()
        widget = self.plots[key]
        if pointer is None:  # the crosshair's top
            vb = widget.getPlotItem().getViewBox()
            pointer = widget.mapFromScene(vb.mapViewToScene(QPointF(x_rel, vb.viewRange()[1][1])))
        at = widget.viewport().mapTo(self, pointer)
        gap = self.fontMetrics().height() // 2
        size, room = self.tip.size(), self.rect()
        # Below and right of the pointer; above or left where the window ends there.
        x = at.x() + gap if at.x() + gap + size.width() <= room.right() \
            else at.x() - gap - size.width()
        y = at.y() + gap if at.y() + gap + size.height() <= room.bottom() \
            else at.y() - gap - size.height()
        self.tip.move(max(0, x), max(0, y))
        self.tip.raise_()
        self.tip.show()

    def _on_mouse_moved(self, key: str, pos: QPointF) -> None:
        widget = self.plots[key]
        vb = widget.getPlotItem().getViewBox()
        if not vb.sceneBoundingRect().contains(pos):
            self.clear_hover()
            return
        x = float(vb.mapSceneToView(pos).x())
        if -self.window_s <= x <= 0:
            self.hover_at(key, x, widget.mapFromScene(pos))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Leave:  # the pointer left a graph
            self.clear_hover()
        return super().eventFilter(watched, event)

    # -- drawing ----------------------------------------------------------------------------
    def _catch_up(self) -> None:
        if self._behind and self._now is not None and window_seen(self):
            self._draw(self._now)

    def _describe(self, p: GpuProcess) -> None:
        self.details.setText("\n".join((
            for_terminal(p.command or p.name or NA),
            tr("User {user} · started {started} · container or job {container} · parent "
               "{parent}", user=for_terminal(p.user or NA), started=_stamp(p.started_s),
               container=for_terminal(p.container or NA), parent=self._parent))))

    def _show_titles(self) -> None:
        """Each graph's name, then its newest numbers in bold (after the curve's colour)."""
        for key, values in current_values(self.trace).items():
            runs = [TextRun(self._names[key])]
            for i, (what, value) in enumerate(values):
                if what:
                    runs += [TextRun("   ■", color=COLORS[i % len(COLORS)]),
                             TextRun(f" {what} ")]
                else:
                    runs.append(TextRun("   "))
                runs.append(TextRun(value, bold=True))
            self.titles[key].set_runs(runs)

    def _draw(self, now: float) -> None:
        self._now, self._behind = now, False
        trace = self.trace
        sets: dict[str, list[tuple[str, Series]]] = {
            "gpu_mem": [(f"GPU {g}", s) for g, s in sorted(trace.gpu_mem.items())],
            "sm": [(f"GPU {g}", s) for g, s in sorted(trace.sm_pct.items())],
            "cpu": [("CPU", trace.cpu_pct)],
            "rss": [("RSS", trace.rss_bytes)],
        }
        for key, lines in sets.items():
            item = self.plots[key].getPlotItem()
            points = [_xy(series, now) for _, series in lines]
            self._set_range(key, item, _top(points, self.window_s))
            curves = item.listDataItems()
            for i, ((name, _), (x, y)) in enumerate(zip(lines, points, strict=True)):
                y = y / self._scales[key]
                if i < len(curves):
                    curves[i].setData(x, y, connect="finite")
                else:
                    item.plot(x, y, pen=COLORS[i % len(COLORS)], name=name, connect="finite")
            item.setXRange(-self.window_s, 0, padding=0)
        self._show_tip()  # a still pointer: the time under it moved on

    def _set_range(self, key: str, item: LitePlot, top: float) -> None:
        """The y axis from 0: a memory graph in the unit of its highest value, SM % to 100,
        CPU % to 100 or more (a process may use several cores)."""
        if key in MEMORY:
            unit, scale = memory_unit(top)
            if unit != self.units.get(key):
                self.units[key], self._scales[key] = unit, scale
                item.setLabel("left", unit)
        scaled = top / self._scales[key]
        nice = next_nice(scaled * 1.05) if scaled > 0 else 1.0
        high = 100.0 if key == "sm" else max(100.0, nice) if key == "cpu" else nice
        if self._tops.get(key) != high:  # set only on change: no range work per tick
            self._tops[key] = high
            item.setYRange(0, high, padding=0.02 if key == "sm" else 0)
