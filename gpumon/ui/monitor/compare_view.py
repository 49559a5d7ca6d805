"""A second run under a panel's curves: dashed, aligned at the first run's start, and one line
under the panel's title with the differences of the means over the time shown.

The second run's series are in memory (``recording/compare.py``); each time the panel draws,
the dashed curves are set from them, and the line says the first run's mean minus the
second's (memory, GPU-Util) over the graphs' window.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from gpumon.i18n import tr
from gpumon.recording.compare import RunSeries, mean_difference
from gpumon.telemetry.model.types import GpuSample
from gpumon.ui.monitor.panel_view import PanelView, SeriesFn
from gpumon.ui.widgets.curve import set_series
from gpumon.units import GIB, format_bytes

COMPARE_COLOR = "#424242"


def difference_text(name: str, mem: float | None, util: float | None) -> str:
    """"vs B: memory +1.20 GiB · GPU-Util −5.0 %"; N/A where a run has no values."""
    mem_text = "N/A" if mem is None else ("+" if mem >= 0 else "−") + format_bytes(abs(mem))
    util_text = "N/A" if util is None else (
        ("+" if round(util, 1) >= 0 else "−") + f"{abs(util):.1f} %")
    return tr("vs {name}: memory {memory} · GPU-Util {util} (means over the window)",
              name=name, memory=mem_text, util=util_text)


class CompareView(PanelView):
    """The second run on one panel: dashed curves on its graphs and the line of differences."""

    def __init__(self, gpu: int, run: RunSeries, memory_plot: pg.PlotItem,
                 util_plot: pg.PlotItem, window_s: Callable[[], float],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(f"compareView{gpu}")
        self.gpu, self.run, self._window_s = gpu, run, window_s
        self.label = QLabel()
        self.label.setObjectName("compareDifferences")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label)
        pen = pg.mkPen(COMPARE_COLOR, width=1.5, style=Qt.PenStyle.DashLine)
        self.curves: dict[str, tuple[pg.PlotCurveItem, float]] = {}
        # over the memory fill, which hid it; under the utilization curve
        for key, plot, scale, z in (("mem_used_bytes", memory_plot, GIB, 5),
                                    ("gpu_util_pct", util_plot, 1.0, -5)):
            curve = pg.PlotCurveItem(pen=pen)
            curve.setZValue(z)
            plot.addItem(curve)
            self.curves[key] = (curve, scale)
        self.differences: dict[str, float | None] = {}
        self._plots = (memory_plot, util_plot)

    def detach(self) -> None:
        """Take the dashed curves off the graphs (another run replaces this one)."""
        for (curve, _), plot in zip(self.curves.values(), self._plots, strict=True):
            plot.removeItem(curve)

    def show_sample(self, sample: GpuSample | None) -> None:
        """Nothing: the differences change when the curves are drawn."""

    def draw(self, series: SeriesFn, t_ref: float) -> None:
        t0 = t_ref - self._window_s()
        for key, (curve, scale) in self.curves.items():
            try:
                first = series(self.gpu, key)
            except KeyError:
                first = (np.empty(0), np.empty(0))
            # to the newest reading: a GPU's own time can be a moment after the snapshot's
            t1 = max(t_ref, float(first[0][-1])) if len(first[0]) else t_ref
            t, v = self.run.series(self.gpu, key)
            shown = (t >= t0 - 1.0) & (t <= t1)
            set_series(curve, t[shown], v[shown] / scale, t_ref, 0.0)
            self.differences[key] = mean_difference(first, (t, v), t0, t1)
        self.label.setText(difference_text(self.run.name, self.differences["mem_used_bytes"],
                                           self.differences["gpu_util_pct"]))

    def needed_height(self, line_height: int) -> int:
        return line_height
