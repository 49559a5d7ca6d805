"""Time per frame of the main window: 8 simulated GPUs with a full 1-hour window.

The History is filled with 3600 points per GPU at 1 s (a fake clock, so it takes seconds,
not an hour); then each frame is the window's per-tick update (``_on_snapshot``: history,
panels' setData, tables, header) plus a forced synchronous repaint of the whole window
(``repaint()``), on Qt's offscreen platform unless QT_QPA_PLATFORM says otherwise.
Target: median frame <= 8 ms. The window's sampling thread is not started: the frames are
driven here, one snapshot each. Baseline, same run: a bare window of 16 pyqtgraph
PlotWidgets (2 per GPU, one 3600-point curve each, pyqtgraph defaults), same size, same
setData + repaint per frame: the floor that pyqtgraph and the raster engine set here.

Run from the repository root: ``python benchmarks/bench_drawing.py [--quick] [--profile]``.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
import pyqtgraph as pg  # noqa: E402
from PySide6.QtWidgets import QApplication, QGridLayout, QWidget  # noqa: E402

from gpumon.telemetry.sampler import Sampler  # noqa: E402
from gpumon.telemetry.simulated import SimulatedSource  # noqa: E402
from gpumon.telemetry.types import Snapshot  # noqa: E402
from gpumon.ui.app import MainWindow  # noqa: E402

TARGET_MS = 8.0
N_GPUS = 8
WINDOW_S = 3600


class FakeClock:
    def __init__(self) -> None:
        self.t = 1_700_000_000.0

    def __call__(self) -> float:
        return self.t


def snapshots(n: int, clock: FakeClock) -> list[Snapshot]:
    source = SimulatedSource(N_GPUS, seed=0, clock=clock)
    sampler = Sampler(source, clock=clock, wall_clock=clock)
    sampler.open()
    out = []
    for _ in range(n):
        clock.t += 1.0
        out.append(sampler.tick())
    sampler.close()
    return out


def baseline_ms(app: QApplication, frames: int) -> float:
    """Median setData + repaint of 16 bare PlotWidgets with 3600 points each."""
    top = QWidget()
    grid = QGridLayout(top)
    curves = []
    for i in range(2 * N_GPUS):
        w = pg.PlotWidget()
        curves.append(w.plot([], []))
        grid.addWidget(w, i // 4, i % 4)
    top.resize(1400, 900)
    top.show()
    x = np.arange(-WINDOW_S, 0, dtype=float)
    rng = np.random.default_rng(0)
    times = []
    for _ in range(frames):
        a = time.perf_counter()
        for c in curves:
            c.setData(x, rng.random(WINDOW_S))
        top.repaint()
        app.processEvents()
        times.append((time.perf_counter() - a) * 1e3)
    top.close()
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="60 timed frames instead of 300")
    parser.add_argument("--profile", action="store_true", help="print cProfile's top 25")
    args = parser.parse_args()
    frames = 60 if args.quick else 300

    app = QApplication.instance() or QApplication(sys.argv)
    clock = FakeClock()
    t0 = time.perf_counter()
    snaps = snapshots(WINDOW_S + frames, clock)
    print(f"made {len(snaps)} snapshots of {N_GPUS} GPUs in {time.perf_counter() - t0:.1f} s")

    window = MainWindow(lambda: SimulatedSource(N_GPUS), 1.0, window_s=WINDOW_S)
    window.start = lambda: None  # type: ignore[method-assign]  # frames are driven here
    window.resize(1400, 900)
    window.show()
    app.processEvents()
    window._on_snapshot(snaps[0])  # panels are created for the GPUs
    for snap in snaps[1:WINDOW_S]:
        window.history.append(snap)
    app.processEvents()
    print(f"history: {window.history.count(0)} points per GPU, capacity "
          f"{window.history.capacity}; platform {app.platformName()}")

    update_ms: list[float] = []
    paint_ms: list[float] = []
    profiler = cProfile.Profile() if args.profile else None
    for snap in snaps[WINDOW_S:]:
        if profiler:
            profiler.enable()
        a = time.perf_counter()
        window._on_snapshot(snap)
        b = time.perf_counter()
        window.repaint()
        app.processEvents()
        c = time.perf_counter()
        if profiler:
            profiler.disable()
        update_ms.append((b - a) * 1e3)
        paint_ms.append((c - b) * 1e3)
    window.close()
    frame = [u + p for u, p in zip(update_ms, paint_ms, strict=True)]
    med = statistics.median(frame)
    p95 = sorted(frame)[int(0.95 * (len(frame) - 1))]
    print(f"frames: {len(frame)}")
    print(f"  update (_on_snapshot) median {statistics.median(update_ms):.2f} ms")
    print(f"  repaint + events      median {statistics.median(paint_ms):.2f} ms")
    print(f"  frame                 median {med:.2f} ms, p95 {p95:.2f} ms "
          f"(target <= {TARGET_MS:g} ms): {'met' if med <= TARGET_MS else 'NOT met'}")
    base = baseline_ms(app, frames)
    print(f"  baseline (16 bare PlotWidgets, 3600 points) median {base:.2f} ms; "
          f"ratio {med / base:.2f}x")
    if profiler:
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)
    return 0 if med <= TARGET_MS else 1


if __name__ == "__main__":
    sys.exit(main())
