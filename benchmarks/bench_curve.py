"""One curve over its fill, rendered: pyqtgraph's PlotCurveItem against gpumon's LiteCurve.

A LitePlotWidget 1,300 x 180 px (offscreen) with one curve, 1 px pen, filled down to 0, new
data set before each render (as each reading does), the whole plot rendered into an image
100 times; CPU time per render, the best of two runs of each. Smooth series of 60, 300 and
3,600 points, and 1,400 points in pairs at one x (what peak decimation gives a long window),
where Qt fills one wide polygon far slower than narrow ones. Baseline: pyqtgraph's own item,
same process, same data.

Run from the repository root: ``python benchmarks/bench_curve.py``.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QApplication

from gpumon.ui.widgets.curve import LiteCurve
from gpumon.ui.widgets.plot import LitePlotWidget

WIDTH, HEIGHT, RENDERS = 1300, 180, 100
CASES = ((60, False), (300, False), (3600, False), (1400, True), (2600, True))


def series(n: int, pairs: bool) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    x = np.repeat(np.arange(n // 2, dtype=float), 2) - n // 2 if pairs else np.arange(
        n, dtype=float) - n
    return x, 50 + 30 * np.sin(np.arange(len(x)) / 7) + rng.random(len(x)) * 40


def render_ms(app: QApplication, kind: type[pg.PlotCurveItem], n: int, pairs: bool) -> float:
    widget = LitePlotWidget()
    widget.resize(WIDTH, HEIGHT)
    widget.show()
    app.processEvents()
    plot = widget.getPlotItem()
    x, y = series(n, pairs)
    plot.setXRange(float(x[0]), float(x[-1]), padding=0)
    plot.setYRange(0, 120, padding=0)
    curve = kind(pen=pg.mkPen("#1f77b4", width=1), connect="finite", fillLevel=0.0,
                 brush=pg.mkBrush("#c0d8ec"))
    plot.addItem(curve)
    image = QImage(WIDTH, HEIGHT, QImage.Format.Format_ARGB32_Premultiplied)
    total = 0.0
    for _ in range(RENDERS):
        curve.setData(x, y, connect="finite", skipFiniteCheck=True)
        start = time.process_time()
        painter = QPainter(image)
        widget.render(painter)
        painter.end()
        total += time.process_time() - start
    widget.close()
    return total / RENDERS * 1e3


def main() -> int:
    app = QApplication.instance() or QApplication(sys.argv)
    print(f"one curve over its fill, {WIDTH} x {HEIGHT} px, CPU ms per render "
          f"(best of 2 x {RENDERS})")
    for n, pairs in CASES:
        theirs = min(render_ms(app, pg.PlotCurveItem, n, pairs) for _ in range(2))
        ours = min(render_ms(app, LiteCurve, n, pairs) for _ in range(2))
        kind = "in pairs" if pairs else "smooth"
        print(f"  {n:5d} points, {kind:8s}: pyqtgraph {theirs:6.3f}  LiteCurve {ours:6.3f}  "
              f"ratio {ours / theirs:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
