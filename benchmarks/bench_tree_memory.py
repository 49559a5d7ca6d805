"""The resident memory of gpumon's whole process tree (the window and, if started, the
playground's kernel), monitor only and after a session that used the playground.

Three programs, each in a fresh process, offscreen, 4 simulated GPUs, a fresh settings
folder; the RSS of the process and all its children summed after ``--settle`` seconds:

1. baseline: a bare PySide6 + pyqtgraph window with one plotted curve;
2. ``python -m gpumon --simulate 4``, settings of a first session (the monitor only: no kernel);
3. the same, with the settings of a session that used the playground (its kernel starts after
   the first frame and imports torch).

``--gpus N``: N simulated GPUs instead of 4; ``--base DIR``: the monitor-only row also for
the gpumon checked out in DIR (e.g. ``git archive``), in the same run.

Target: the monitor only <= 1.25x the bare window (issue 52; issue 30's was 1.3x).
Run from the repository root:
``python benchmarks/bench_tree_memory.py [--settle S] [--gpus N] [--base DIR]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from machine import describe  # noqa: E402 (benchmarks/machine.py, beside this script)

BARE = """
import sys
from PySide6.QtWidgets import QApplication
import pyqtgraph as pg
app = QApplication(sys.argv)
w = pg.PlotWidget()
w.plot(list(range(300)), [i % 17 for i in range(300)])
w.resize(1400, 900)
w.show()
app.exec()
"""


TARGET = 1.25  # (the tree runs from its own folder: ``-m`` puts the folder first on the path)


def tree_rss(argv: list[str], config: Path, settle_s: float,
             root: Path = REPO) -> tuple[int, int]:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(config),
               PYTHONPATH=str(root))
    proc = subprocess.Popen(argv, env=env, cwd=root, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        time.sleep(settle_s)
        root = psutil.Process(proc.pid)
        members = [root, *root.children(recursive=True)]
        return sum(p.memory_info().rss for p in members), len(members)
    finally:
        proc.terminate()
        proc.wait(20)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--settle", type=float, default=12.0)
    parser.add_argument("--gpus", type=int, default=4)
    parser.add_argument("--base", type=Path, default=None, metavar="DIR")
    args = parser.parse_args()
    print(describe())
    mib = 1024 * 1024
    with tempfile.TemporaryDirectory() as tmp:
        fresh, used = Path(tmp) / "fresh", Path(tmp) / "used"
        remember = ("from gpumon.ui.window.settings import Settings\n"
                    "s = Settings.user(); s.playground_used = True; s.sync()")
        subprocess.run([sys.executable, "-c", remember], check=True, cwd=REPO,
                       env=dict(os.environ, XDG_CONFIG_HOME=str(used)))
        bare, _ = tree_rss([sys.executable, "-c", BARE], fresh, args.settle)
        gpumon = [sys.executable, "-m", "gpumon", "--simulate", str(args.gpus)]
        monitor, n_monitor = tree_rss(gpumon, fresh, args.settle)
        base = tree_rss(gpumon, fresh, args.settle, args.base)[0] if args.base else None
        played, n_played = tree_rss(gpumon, used, args.settle)
    print(f"  bare PySide6 + pyqtgraph window:     {bare / mib:7.1f} MiB (baseline)")
    print(f"  gpumon, monitor only ({n_monitor} process, {args.gpus} GPUs): "
          f"{monitor / mib:7.1f} MiB ({monitor / bare:.2f}x the baseline; target <= "
          f"{TARGET:g}x: {'met' if monitor <= TARGET * bare else 'NOT met'})")
    if base is not None:
        print(f"  gpumon at {args.base}, monitor only: {base / mib:7.1f} MiB "
              f"({base / bare:.2f}x the baseline)")
    print(f"  gpumon after a playground session ({n_played} processes, kernel with torch): "
          f"{played / mib:7.1f} MiB ({played / bare:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
