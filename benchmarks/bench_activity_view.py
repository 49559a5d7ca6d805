"""What the panels' activity view (View ▸ Activity) adds to a tick of the GPU grid.

2 and 8 simulated GPUs with GPM (H100s), 1400 x 900, offscreen unless QT_QPA_PLATFORM says
otherwise, the History full for the window at 1 s (with the views on, 8 panels are taller than
the grid: those scrolled away draw no curves, so fewer are drawn; the panels on screen are
printed). A tick is ``grid.update_view`` (readouts,
curves) plus the paint it causes (``processEvents()``), timed together, CPU time of the
process. Three cases, each its own grid, run in turn, ``--rounds`` times: the views off (the
baseline), on, and on with every panel hidden (View ▸ GPUs: what a view no one sees costs).
For the default 5-minute window and the 1-minute one (every curve moves on every tick there).
Target: the views add at most 60 % to a tick (they draw 5 curves a GPU beside the panel's 3),
and hidden ones at most 0.05 ms a tick over a grid with every panel hidden and no views.

Run from the repository root: ``python benchmarks/bench_activity_view.py [--quick]
[--rounds N]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PySide6.QtWidgets import QApplication, QGridLayout, QWidget

from gpumon.telemetry.history.store import History, capacity_for
from gpumon.telemetry.model.types import Snapshot
from gpumon.telemetry.sources.sampler import Sampler
from gpumon.telemetry.sources.simulated import SimulatedSource
from gpumon.ui.monitor.grid import GpuGrid
from gpumon.ui.monitor.panel_options import ActivityViews

GPU_COUNTS = (2, 8)
WINDOWS = (300, 60)
ADDED_TARGET = 0.60  # the views on: at most 60 % more per tick
HIDDEN_TARGET_MS = 0.05  # hidden panels with views: at most this over hidden ones without


class FakeClock:
    def __init__(self) -> None:
        self.t = 1_700_000_000.0

    def __call__(self) -> float:
        return self.t


def snapshots(n: int, gpus: int) -> list[Snapshot]:
    """``n`` readings, 1 s apart, of ``gpus`` H100s (the simulated models cycle)."""
    clock = FakeClock()
    source = SimulatedSource(8 * gpus, seed=0, clock=clock)  # one H100 in every 8
    sampler = Sampler(source, clock=clock, wall_clock=clock)
    sampler.open()
    out = []
    for _ in range(n):
        clock.t += 1.0
        snap = sampler.tick()
        keep = [i for i, g in enumerate(snap.gpus) if "H100" in g.name][:gpus]
        out.append(dataclasses.replace(snap, gpus=tuple(snap.gpus[i] for i in keep),
                                       samples=tuple(snap.samples[i] for i in keep)))
    sampler.close()
    return out


def run_case(app: QApplication, snaps: list[Snapshot], window_s: int, frames: int,
             case: str) -> tuple[list[float], int]:
    """CPU ms per tick of one grid in ``case`` ("off", "on"; "hidden": views on, panels
    hidden; "hidden-off": panels hidden, no views), and how many panels were on screen."""
    top = QWidget()
    layout = QGridLayout(top)
    grid = GpuGrid()
    layout.addWidget(grid)
    top.resize(1400, 900)
    top.show()
    history = History(capacity_for(window_s, 1.0))
    for snap in snaps[:window_s + 1]:
        history.append(snap)
    first = snaps[window_s]
    grid.set_gpus(first.gpus, window_s)
    views = ActivityViews(grid, history, top, latest=lambda: first,
                          on=case in ("on", "hidden"))
    views.attach()
    if case.startswith("hidden"):
        grid.set_hidden({p.index for p in grid.panels})
    for _ in range(5):
        app.processEvents()
    grid.update_view(first, history, window_s)
    for _ in range(5):
        app.processEvents()
    cpu = []
    for snap in snaps[window_s + 1:window_s + 1 + frames]:
        history.append(snap)
        c = time.process_time()
        grid.update_view(snap, history, window_s)
        app.processEvents()
        cpu.append((time.process_time() - c) * 1e3)
    seen = sum(1 for p in grid.panels if p.isVisible() and not p.visibleRegion().isEmpty())
    top.close()
    top.deleteLater()
    app.processEvents()
    return cpu, seen


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="40 ticks a case instead of 120")
    parser.add_argument("--rounds", type=int, default=2, help="each case this many times")
    args = parser.parse_args()
    frames = 40 if args.quick else 120
    app = QApplication.instance() or QApplication(sys.argv)
    assert isinstance(app, QApplication)
    cases = ("off", "on", "hidden-off", "hidden")
    met = True
    print(f"1400 x 900, {frames} ticks a case, {args.rounds} rounds; CPU ms per tick (mean, "
          "median), panels on screen")
    for gpus in GPU_COUNTS:
        snaps = snapshots(max(WINDOWS) + frames + 2, gpus)
        for window_s in WINDOWS:
            got: dict[str, list[float]] = {case: [] for case in cases}
            seen: dict[str, int] = {}
            for r in range(args.rounds):
                for case in cases if r % 2 == 0 else tuple(reversed(cases)):
                    ms, seen[case] = run_case(app, snaps, window_s, frames, case)
                    got[case] += ms
            means = {case: statistics.fmean(v) for case, v in got.items()}
            for case in cases:
                print(f"  {gpus} GPUs, window {window_s:3d} s  {case:10s} {means[case]:7.2f} "
                      f"{statistics.median(got[case]):7.2f}   {seen[case]} on screen")
            added = means["on"] / means["off"] - 1.0
            hidden = means["hidden"] - means["hidden-off"]
            print(f"  {gpus} GPUs, window {window_s:3d} s  views add {added:+.0%} (target <= "
                  f"{ADDED_TARGET:+.0%}); hidden views {hidden:+.3f} ms (target <= "
                  f"{HIDDEN_TARGET_MS} ms)")
            met = met and added <= ADDED_TARGET and hidden <= HIDDEN_TARGET_MS
    print("target met" if met else "target NOT met")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
