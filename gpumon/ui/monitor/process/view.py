"""A process's own window: its command line, user, start, container or job and parent, and
live graphs of its GPU memory and SM % on each GPU it uses, its host CPU % and host memory.

It draws a ProcessTrace (telemetry/history/process_trace.py) over the toolbar's time window: first
what the History kept of the process (so it opens with the time before it opened), then the
window's snapshots; after the process ends it stays, marked "exited" with the time. While
its window is minimised the trace grows but the graphs wait; they are drawn when it is
restored.
"""

from __future__ import annotations

import math
import time

import numpy as np
import psutil
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGridLayout, QLabel, QVBoxLayout, QWidget

from gpumon.i18n import tr
from gpumon.telemetry.history.process_trace import ProcessTrace, Series
from gpumon.telemetry.history.store import History
from gpumon.telemetry.model.types import GpuProcess, Snapshot
from gpumon.ui.widgets.plot import LitePlotWidget
from gpumon.ui.widgets.seen import SeenWatch, window_seen
from gpumon.units import GIB, NA
from gpumon.untrusted import for_terminal

COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
          "#7f7f7f")


def _stamp(t: float | None) -> str:
    return NA if t is None else time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))


def _parent(pid: int) -> str:
    """``PID (name)`` of the process's parent, read once; N/A when it cannot be seen."""
    try:
        parent = psutil.Process(pid).parent()
        return NA if parent is None else f"{parent.pid} ({for_terminal(parent.name())})"
    except psutil.Error:
        return NA


def _xy(series: Series, now: float, scale: float) -> tuple[np.ndarray, np.ndarray]:
    x = np.fromiter((t - now for t, _ in series), float, len(series))
    y = np.fromiter((math.nan if v is None else v / scale for _, v in series), float,
                    len(series))
    return x, y


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
        grid = QGridLayout()
        for i, (key, title, unit) in enumerate((("gpu_mem", tr("GPU memory"), "GiB"),
                                                ("sm", tr("SM %"), "%"),
                                                ("cpu", tr("CPU %"), "%"),
                                                ("rss", tr("Host memory"), "GiB"))):
            box = QVBoxLayout()
            box.addWidget(QLabel(title, self))
            plot = LitePlotWidget(background="w")
            plot.setMinimumSize(260, 160)
            plot.getPlotItem().setLabel("left", unit)
            plot.getPlotItem().showGrid(x=True, y=True, alpha=0.3)
            if key in ("gpu_mem", "sm"):  # a curve per GPU: say which is which
                plot.getPlotItem().addLegend(offset=(8, 8))
            self.plots[key] = plot
            box.addWidget(plot)
            grid.addLayout(box, i // 2, i % 2)
        layout = QVBoxLayout(self)
        layout.addWidget(self.details)
        layout.addWidget(self.status)
        layout.addLayout(grid, 1)
        self._describe(process)
        fm = self.fontMetrics()  # room for the text and graphs at a larger zoom
        self.resize(max(760, 64 * fm.averageCharWidth()), max(560, 34 * fm.height()))
        self._behind = False  # ticks came while no one could see the graphs
        self._seen_watch = SeenWatch(self, self._catch_up)
        if self._now is not None:
            self._draw(self._now)

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
        if self.isVisible() and not window_seen(self):  # minimised: drawn when restored
            self._now, self._behind = snap.timestamp_s, True
            return
        self._draw(snap.timestamp_s)

    def _catch_up(self) -> None:
        if self._behind and self._now is not None and window_seen(self):
            self._draw(self._now)

    def _describe(self, p: GpuProcess) -> None:
        self.details.setText("\n".join((
            for_terminal(p.command or p.name or NA),
            tr("User {user} · started {started} · container or job {container} · parent "
               "{parent}", user=for_terminal(p.user or NA), started=_stamp(p.started_s),
               container=for_terminal(p.container or NA), parent=self._parent))))

    def _draw(self, now: float) -> None:
        self._now, self._behind = now, False
        trace = self.trace
        sets: dict[str, list[tuple[str, Series, float]]] = {
            "gpu_mem": [(f"GPU {g}", s, GIB) for g, s in sorted(trace.gpu_mem.items())],
            "sm": [(f"GPU {g}", s, 1.0) for g, s in sorted(trace.sm_pct.items())],
            "cpu": [("CPU", trace.cpu_pct, 1.0)],
            "rss": [("RSS", trace.rss_bytes, GIB)],
        }
        for key, lines in sets.items():
            item = self.plots[key].getPlotItem()
            curves = item.listDataItems()
            for i, (name, series, scale) in enumerate(lines):
                x, y = _xy(series, now, scale)
                if i < len(curves):
                    curves[i].setData(x, y, connect="finite")
                else:
                    item.plot(x, y, pen=COLORS[i % len(COLORS)], name=name, connect="finite")
            item.setXRange(-self.window_s, 0, padding=0)
