"""Time per frame of the main window: 8 simulated GPUs with a full 1-hour window.

The History is filled with 3600 points per GPU at 1 s (a fake clock, so it takes seconds,
not an hour); then each frame is one tick as the app draws it: the window's per-tick update
(``_on_snapshot``: history, panels' setData, tables, header) plus the paint that it causes
(``processEvents()``: Qt repaints what changed), on Qt's offscreen platform unless
QT_QPA_PLATFORM says otherwise. Target: median frame <= 8 ms; the p95 and the slowest frame
are printed too. Every 10th frame is followed (untimed for the tick figures) by a forced
repaint of the whole window, ``repaint()``, what an expose or a resize costs; printed as
"full repaint". The same is measured for the default 5-minute window, where every curve moves
on every tick. The window's sampling thread is not started: frames are driven here, one
snapshot each. Baseline, same run: a bare window of 16 pyqtgraph PlotWidgets (2 per GPU, one
3600-point curve each, pyqtgraph defaults), same size, setData + processEvents per frame.

Run from the repository root: ``python benchmarks/bench_drawing.py [--quick] [--profile]``.

``--grid [--base DIR] [--rounds N] [--quick]``: the drawing alone, without the window's
tables and header: a GpuGrid of 1, 8 and 16 simulated GPUs (1400 x 900, offscreen) with a
1-minute, 5-minute and 1-hour window, its History full, sampled at 1 s; a tick is
``grid.update_view`` (readouts, curves) plus the paint it causes (``processEvents()``), timed
together, over 120 ticks (``--quick``: 40). Each tree of gpumon runs in its own process
(``--base DIR``: another checkout, e.g. ``git archive main``), alternately, ``--rounds``
times. The table gives the mean CPU time per tick (wall
time in brackets: the machine may be shared) and the ratios to base.
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
# --grid runs each tree of gpumon in a child process that imports it from BENCH_TREE
sys.path.insert(0, os.environ.get("BENCH_TREE", str(REPO)))

import numpy as np  # noqa: E402
import pyqtgraph as pg  # noqa: E402
from PySide6.QtWidgets import QApplication, QGridLayout, QWidget  # noqa: E402

from gpumon.telemetry.model.types import Snapshot  # noqa: E402
from gpumon.telemetry.sources.sampler import Sampler  # noqa: E402
from gpumon.telemetry.sources.simulated import SimulatedSource  # noqa: E402
from gpumon.ui.window.main_window import MainWindow  # noqa: E402

TARGET_MS = 8.0
N_GPUS = 8
WINDOW_S = 3600
DEFAULT_WINDOW_S = 300


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
    """Median setData + paint of 16 bare PlotWidgets with 3600 points each."""
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
        app.processEvents()
        times.append((time.perf_counter() - a) * 1e3)
    top.close()
    return statistics.median(times)


def measure(app: QApplication, snaps: list[Snapshot], window_s: int, frames: int,
            profiler: cProfile.Profile | None) -> tuple[list[float], list[float], list[float]]:
    """(update ms, tick frame ms, full repaint ms) for ``frames`` ticks at ``window_s``."""
    window = MainWindow(lambda: SimulatedSource(N_GPUS), 1.0, window_s=window_s)
    window.start = lambda: None  # type: ignore[method-assign]  # frames are driven here
    window.resize(1400, 900)
    window.show()
    app.processEvents()
    window.sampling.snapshot.emit(snaps[0])  # panels are created for the GPUs
    for snap in snaps[1:WINDOW_S]:
        window.history.append(snap)
    app.processEvents()
    window.repaint()
    app.processEvents()
    print(f"window {window_s} s: history {window.history.count(0)} points per GPU, capacity "
          f"{window.history.capacity}; platform {app.platformName()}")
    update_ms: list[float] = []
    frame_ms: list[float] = []
    full_ms: list[float] = []
    for n, snap in enumerate(snaps[WINDOW_S:WINDOW_S + frames]):
        if profiler:
            profiler.enable()
        a = time.perf_counter()
        window.sampling.snapshot.emit(snap)
        b = time.perf_counter()
        app.processEvents()
        c = time.perf_counter()
        if profiler:
            profiler.disable()
        update_ms.append((b - a) * 1e3)
        frame_ms.append((c - a) * 1e3)
        if n % 10 == 9:
            a = time.perf_counter()
            window.repaint()
            app.processEvents()
            full_ms.append((time.perf_counter() - a) * 1e3)
    window.close()
    app.processEvents()
    return update_ms, frame_ms, full_ms


def report(name: str, update_ms: list[float], frame_ms: list[float],
           full_ms: list[float]) -> float:
    med = statistics.median(frame_ms)
    p95 = sorted(frame_ms)[int(0.95 * (len(frame_ms) - 1))]
    print(f"{name}: {len(frame_ms)} ticks")
    print(f"  update (_on_snapshot)     median {statistics.median(update_ms):.2f} ms")
    print(f"  tick frame (update+paint) median {med:.2f} ms, p95 {p95:.2f} ms, "
          f"max {max(frame_ms):.2f} ms")
    print(f"  full repaint (expose)     median {statistics.median(full_ms):.2f} ms, "
          f"max {max(full_ms):.2f} ms")
    return med


GRID_GPUS = (1, 8, 16)
GRID_WINDOWS = (60, 300, 3600)


def grid_child(frames: int) -> None:
    """In a process of one tree: a JSON line per (GPUs, window) with the tick times in ms."""
    import json

    from gpumon.telemetry.history.store import History, capacity_for
    from gpumon.ui.monitor.grid import GpuGrid

    app = QApplication.instance() or QApplication(sys.argv)
    clock = FakeClock()
    source = SimulatedSource(max(GRID_GPUS), seed=0, clock=clock)
    sampler = Sampler(source, clock=clock, wall_clock=clock)
    sampler.open()
    snaps = []
    for _ in range(max(GRID_WINDOWS) + frames + 1):
        clock.t += 1.0
        snaps.append(sampler.tick())
    sampler.close()
    for n in GRID_GPUS:
        subset = [_only(s, n) for s in snaps]
        for window_s in GRID_WINDOWS:
            top = QWidget()
            layout = QGridLayout(top)
            grid = GpuGrid()
            layout.addWidget(grid)
            top.resize(1400, 900)
            top.show()
            history = History(capacity_for(window_s, 1.0))
            start = len(subset) - frames - window_s - 1
            for snap in subset[start:start + window_s + 1]:
                history.append(snap)
            first = subset[start + window_s]
            grid.set_gpus(first.gpus, window_s)
            for _ in range(5):
                app.processEvents()
            grid.update_view(first, history, window_s)
            for _ in range(5):
                app.processEvents()
            times, cpu = [], []
            for snap in subset[start + window_s + 1:]:
                history.append(snap)
                a, c = time.perf_counter(), time.process_time()
                grid.update_view(snap, history, window_s)
                app.processEvents()
                times.append((time.perf_counter() - a) * 1e3)
                cpu.append((time.process_time() - c) * 1e3)
            top.close()
            top.deleteLater()
            app.processEvents()
            print(json.dumps({"gpus": n, "window": window_s, "ms": times, "cpu": cpu}),
                  flush=True)


def _only(snap: Snapshot, n: int) -> Snapshot:
    """``snap`` with its first ``n`` GPUs only."""
    import dataclasses

    return dataclasses.replace(snap, gpus=snap.gpus[:n], samples=snap.samples[:n])


def grid_compare(base: Path | None, rounds: int, frames: int) -> int:
    """Run ``grid_child`` for this tree and ``base``, alternately; print the table."""
    import json
    import subprocess

    trees = {"this tree": REPO} | ({"base": base} if base else {})
    results: dict[tuple[str, int, int], list[float]] = {}
    cpus: dict[tuple[str, int, int], list[float]] = {}
    for n in range(rounds):
        order = list(trees.items()) if n % 2 == 0 else list(reversed(trees.items()))
        for name, root in order:
            env = dict(os.environ, BENCH_TREE=str(root), QT_QPA_PLATFORM="offscreen")
            out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--grid-child",
                                  str(frames)], env=env, cwd=root, capture_output=True,
                                 text=True, check=True, timeout=900)
            for line in out.stdout.splitlines():
                row = json.loads(line)
                results.setdefault((name, row["gpus"], row["window"]), []).extend(row["ms"])
                cpus.setdefault((name, row["gpus"], row["window"]), []).extend(row["cpu"])
            print(f"round {n + 1}: {name} done", flush=True)
    print("\nms per tick, mean over all ticks and rounds: CPU time of the process (wall "
          "time in brackets)")
    print(f"{'GPUs':>4s} {'window':>7s}" + "".join(f"{name:>22s}" for name in trees)
          + ("   this/base" if base else ""))
    for gpus in GRID_GPUS:
        for window_s in GRID_WINDOWS:
            means = {name: statistics.fmean(cpus[(name, gpus, window_s)]) for name in trees}
            walls = {name: statistics.fmean(results[(name, gpus, window_s)]) for name in trees}
            cells = [f"{means[name]:9.2f} ({walls[name]:6.2f})" for name in trees]
            ratio = f"   {means['this tree'] / means['base']:8.2f}x" if base else ""
            print(f"{gpus:4d} {window_s:6d}s" + "".join(f"{c:>22s}" for c in cells) + ratio)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="60 timed frames instead of 300")
    parser.add_argument("--profile", action="store_true", help="print cProfile's top functions")
    parser.add_argument("--top", type=int, default=25, help="with --profile: how many")
    parser.add_argument("--grid", action="store_true", help="the drawing alone (module doc)")
    parser.add_argument("--base", type=Path, default=None, metavar="DIR",
                        help="with --grid: also measure the gpumon checked out in DIR")
    parser.add_argument("--rounds", type=int, default=1, help="with --grid: repetitions")
    parser.add_argument("--grid-child", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.grid_child is not None:
        grid_child(args.grid_child)
        return 0
    if args.grid:
        return grid_compare(args.base, max(1, args.rounds), 40 if args.quick else 120)
    frames = 60 if args.quick else 300

    app = QApplication.instance() or QApplication(sys.argv)
    clock = FakeClock()
    t0 = time.perf_counter()
    snaps = snapshots(WINDOW_S + frames, clock)
    print(f"made {len(snaps)} snapshots of {N_GPUS} GPUs in {time.perf_counter() - t0:.1f} s")
    profiler = cProfile.Profile() if args.profile else None
    med = report("1-hour window", *measure(app, snaps, WINDOW_S, frames, profiler))
    print(f"  target: median tick frame <= {TARGET_MS:g} ms: "
          f"{'met' if med <= TARGET_MS else 'NOT met'}")
    report("5-minute window (the default; every curve moves every tick)",
           *measure(app, snaps, DEFAULT_WINDOW_S, frames, None))
    base = baseline_ms(app, frames)
    print(f"baseline (16 bare PlotWidgets, 3600 points, setData + paint) median {base:.2f} ms; "
          f"1-hour tick frame / baseline {med / base:.2f}x")
    if profiler:
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(args.top)
    return 0 if med <= TARGET_MS else 1


if __name__ == "__main__":
    sys.exit(main())
