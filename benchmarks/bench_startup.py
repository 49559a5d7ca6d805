"""Start-up time: process start to the first frame painted with data, against a bare window.

Each run is a fresh ``python -c`` process. gpumon: MainWindow on 4 simulated GPUs (as
``python -m gpumon --simulate 4`` builds it); the clock stops at the first paint event
after the first Snapshot arrived. Baseline: QApplication + one pyqtgraph PlotWidget with one
curve whose data is set before show; the clock stops at its first paint. Both measured the
same way (an application-wide event filter, no hook in gpumon), alternately, several times;
medians. Target: gpumon <= 1.3x the baseline. Also prints whether ``torch`` was imported
before the playground was used (it must not be).

``--launch``: gpumon as ``python -m gpumon --simulate 4`` starts it (``launch.run()``: the
settings, the menus of other windows, the translations), with two clocks: the window's first
frame (the window mapped: issue 52's row "window mapped after launch", target <= 1.1x the
bare window's first frame) and, as above, its first frame with data. ``--base DIR``: with
``--launch``, the gpumon checked out in DIR too, alternating.

``--phases``: where the main thread's CPU goes, launched as ``--launch`` launches it, against
the bare window's (``time.thread_time()`` at each step, so the load of other processes weighs
less than on wall time): Qt's application, gpumon's window module (with numpy; the bare
window: numpy + pyqtgraph), the window built, the rest of ``launch.run()`` and the window's
first frame (where that comes before the first snapshot), the rest up to the first snapshot,
that snapshot handled (the GPU panels are built for it, and pyqtgraph loaded for their
graphs), the first frame with data painted. Medians of the runs.

Run from the repository root: ``python benchmarks/bench_startup.py [--quick | --runs N]
[--launch [--base DIR]] [--phases]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TARGET = 1.3

# the clock's stop, in every program: the first paint once ready() (report() defined by each)
FIRST_PAINT = """
class FirstPaint(QObject):
    def __init__(self, ready):
        super().__init__(); self.ready = ready; self.done = False
    def eventFilter(self, obj, event):
        if not self.done and event.type() == QEvent.Type.Paint and self.ready():
            self.done = True
            QTimer.singleShot(0, report)
        return False
"""
# the baseline: one pyqtgraph plot of one 300-point curve, the window's size
BARE_PLOT = """
import pyqtgraph as pg, numpy as np
w = pg.PlotWidget(); w.plot(np.arange(300.0), np.random.default_rng(0).random(300))
w.resize(1400, 900)
"""
COMMON = """
import sys, time
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QWidget
""" + FIRST_PAINT + """def report():
    print(f"{time.time():.6f} torch_loaded={'torch' in sys.modules}", flush=True)
    QApplication.instance().quit()
app = QApplication(sys.argv)
"""
GPUMON = COMMON + """
from gpumon.ui.window.main_window import MainWindow, simulated_factory
w = MainWindow(simulated_factory(4))
f = FirstPaint(lambda: w.snapshot_count > 0); app.installEventFilter(f)
w.show(); app.exec(); w.close()
"""
# gpumon as `python -m gpumon --simulate 4` starts it, the clock stopped once it has data
# (MainWindow imported before)
LAUNCHED = """
class Mapped(QObject):
    def __init__(self):
        super().__init__(); self.done = False
    def eventFilter(self, obj, event):
        if (not self.done and event.type() == QEvent.Type.Paint and isinstance(obj, QWidget)
                and isinstance(obj.window(), MainWindow)):
            self.done = True
            QTimer.singleShot(0, on_mapped)  # once that frame is painted, as FirstPaint
        return False
mapped = Mapped(); app.installEventFilter(mapped)
def ready():
    return any(isinstance(w, MainWindow) and w.snapshot_count > 0
               for w in QApplication.topLevelWidgets())
f = FirstPaint(ready); app.installEventFilter(f)
from gpumon.cli.main import main
sys.argv = ["gpumon", "--simulate", "4"]
main()
"""
LAUNCH = COMMON + """
from gpumon.ui.window.main_window import MainWindow
def on_mapped():
    print(f"mapped {time.time():.6f}", flush=True)
""" + LAUNCHED
LAUNCH_TARGET = 1.1
# --phases: the steps are marked by wrapping the window's constructor and snapshot slot from
# outside (nothing in gpumon knows it is measured); each line printed is "name seconds"
PHASES_COMMON = """
import sys, time
marks = []
def mark(name): marks.append((name, time.thread_time()))
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QWidget
app = QApplication(sys.argv)
mark("QApplication")
""" + FIRST_PAINT + """def report():
    mark("first frame painted")
    before = 0.0
    for name, t in marks:
        print(f"phase {t - before:.6f} {name}", flush=True)
        before = t
    print(f"phase {marks[-1][1]:.6f} total", flush=True)
    QApplication.instance().quit()
"""
PHASES_GPUMON = PHASES_COMMON + """
from gpumon.ui.window import main_window
mark("gpumon's window module imported")
MainWindow = main_window.MainWindow
built, handled = MainWindow.__init__, MainWindow._on_snapshot
def init(self, *args, **kwargs):
    mark("launch.run() up to the window"); built(self, *args, **kwargs); mark("window built")
def on_snapshot(self, snap):
    if self.snapshot_count == 0:
        mark("the rest, to the first snapshot handed on")
        handled(self, snap)
        mark("first snapshot handled (its GPU panels built)")
    else:
        handled(self, snap)
MainWindow.__init__, MainWindow._on_snapshot = init, on_snapshot
def on_mapped():
    mark("the rest of launch.run(), the window's first frame")
""" + LAUNCHED
PHASES_BARE = PHASES_COMMON + """
import numpy, pyqtgraph
mark("numpy + pyqtgraph imported")
""" + BARE_PLOT + """mark("plot built")
f = FirstPaint(lambda: True); app.installEventFilter(f)
w.show(); app.exec()
"""
BARE = COMMON + BARE_PLOT + """f = FirstPaint(lambda: True); app.installEventFilter(f)
w.show(); app.exec()
"""


def once(code: str, env: dict[str, str], cwd: Path = REPO) -> tuple[float, bool]:
    """Seconds from start to the first frame, and whether torch was loaded by then. ``cwd``:
    the tree measured (``-c`` puts the working folder first on the path)."""
    seconds, torch_loaded, _ = once_mapped(code, env, cwd)
    return seconds, torch_loaded


def once_mapped(code: str, env: dict[str, str], cwd: Path = REPO
                ) -> tuple[float, bool, float]:
    """As ``once``, and the seconds to the window's first frame, with data or not (the same
    where the program prints no "mapped" line: the bare window's first frame)."""
    start = time.time()
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=120, cwd=cwd)
    lines = [ln for ln in done.stdout.splitlines() if "torch_loaded=" in ln]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"run failed ({done.returncode}):\n{done.stderr[-2000:]}")
    stamp, flag = lines[-1].split()
    mapped = [float(ln.split()[1]) for ln in done.stdout.splitlines()
              if ln.startswith("mapped ")]
    return float(stamp) - start, flag.endswith("True"), (mapped or [float(stamp)])[0] - start


def phases(reps: int) -> int:
    """The main thread's CPU per step of start-up, gpumon and the bare window, medians."""
    runs: dict[str, list[dict[str, float]]] = {"bare": [], "gpumon": []}
    with tempfile.TemporaryDirectory() as config:
        env = dict(os.environ, XDG_CONFIG_HOME=config, PYTHONPATH=str(REPO))
        env.setdefault("QT_QPA_PLATFORM", "offscreen")
        for code in (PHASES_BARE, PHASES_GPUMON):
            subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                           timeout=120, cwd=REPO, check=False)  # warm the file cache
        for _ in range(reps):
            for name, code in (("bare", PHASES_BARE), ("gpumon", PHASES_GPUMON)):
                done = subprocess.run([sys.executable, "-c", code], env=env,
                                      capture_output=True, text=True, timeout=120, cwd=REPO,
                                      check=False)
                steps = {}
                for line in done.stdout.splitlines():
                    if line.startswith("phase "):
                        _, seconds, step = line.split(" ", 2)
                        steps[step] = float(seconds)
                if done.returncode != 0 or "total" not in steps:
                    raise RuntimeError(f"run failed ({done.returncode}):\n{done.stderr[-2000:]}")
                runs[name].append(steps)
    print(f"main thread CPU per step (thread_time), median of {reps} runs, ms")
    for name, steps_of_runs in runs.items():
        print(f"  {name}:")
        for step in steps_of_runs[0]:
            values = [r[step] for r in steps_of_runs if step in r]
            print(f"    {statistics.median(values) * 1e3:7.0f}  {step}")
    total = {k: statistics.median(r["total"] for r in v) for k, v in runs.items()}
    print(f"  gpumon / bare: {total['gpumon'] / total['bare']:.2f}x "
          f"(+{(total['gpumon'] - total['bare']) * 1e3:.0f} ms)")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 runs each instead of 7")
    parser.add_argument("--runs", type=int, default=None, metavar="N",
                        help="N runs each (default 7, --quick 3)")
    parser.add_argument("--launch", action="store_true", help="as python -m gpumon starts")
    parser.add_argument("--base", type=Path, default=None, metavar="DIR")
    parser.add_argument("--phases", action="store_true", help="the main thread's CPU by step")
    args = parser.parse_args()
    reps = args.runs or (3 if args.quick else 7)
    if args.phases:
        return phases(reps)
    if args.launch:
        return launch(reps, args.base)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    with tempfile.TemporaryDirectory() as config:
        env["XDG_CONFIG_HOME"] = config  # the user's remembered settings play no part
        once(BARE, env)  # warm the file cache for both
        once(GPUMON, env)
        bare, app, torch_flags = [], [], []
        for _ in range(reps):
            bare.append(once(BARE, env)[0])
            t, torch_loaded = once(GPUMON, env)
            app.append(t)
            torch_flags.append(torch_loaded)
    b, a = statistics.median(bare), statistics.median(app)
    print(f"platform {env['QT_QPA_PLATFORM']}, {reps} runs each")
    print(f"  bare PySide6 + pyqtgraph window: median {b * 1e3:.0f} ms "
          f"({', '.join(f'{x * 1e3:.0f}' for x in bare)})")
    print(f"  gpumon first frame with data:    median {a * 1e3:.0f} ms "
          f"({', '.join(f'{x * 1e3:.0f}' for x in app)})")
    print(f"  ratio {a / b:.2f}x (target <= {TARGET}x): {'met' if a / b <= TARGET else 'NOT met'}")
    print(f"  torch in sys.modules at the first frame: {any(torch_flags)}")
    return 0 if a / b <= TARGET and not any(torch_flags) else 1


def launch(reps: int, base: Path | None) -> int:
    """``python -m gpumon --simulate 4`` against the bare window, and the base tree's: the
    window's first frame (mapped), and its first frame with data."""
    trees = {"this tree": REPO} | ({f"base {base}": base} if base else {})
    bare_name = "bare PySide6 + pyqtgraph window"
    mapped: dict[str, list[float]] = {bare_name: []}
    data: dict[str, list[float]] = {bare_name: []}
    with tempfile.TemporaryDirectory() as config:
        env = dict(os.environ, XDG_CONFIG_HOME=config)
        env.setdefault("QT_QPA_PLATFORM", "offscreen")
        for root in trees.values():  # warm the file cache for each
            once(LAUNCH, dict(env, PYTHONPATH=str(root)), root)
        once(BARE, env)
        for _ in range(reps):
            t = once(BARE, env)[0]
            mapped[bare_name].append(t)
            data[bare_name].append(t)
            for name, root in trees.items():
                t, _, first = once_mapped(LAUNCH, dict(env, PYTHONPATH=str(root)), root)
                mapped.setdefault(f"gpumon ({name})", []).append(first)
                data.setdefault(f"gpumon ({name})", []).append(t)
    print(f"platform {env['QT_QPA_PLATFORM']}, {reps} runs each")
    ok = True
    for title, times in (("the window's first frame (mapped)", mapped),
                         ("the first frame with data", data)):
        print(f" to {title}:")
        bare = statistics.median(times[bare_name])
        for name, values in times.items():
            med = statistics.median(values)
            line = (f"  {name:40s} median {med * 1e3:5.0f} ms "
                    f"({', '.join(f'{x * 1e3:.0f}' for x in values)}); {med / bare:.2f}x the bare")
            if name == "gpumon (this tree)" and times is mapped:
                met = med / bare <= LAUNCH_TARGET
                ok &= met
                line += f" (target <= {LAUNCH_TARGET}x: {'met' if met else 'NOT met'})"
            print(line)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
