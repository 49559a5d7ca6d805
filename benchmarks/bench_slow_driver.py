"""The window's GUI thread while every NVML call takes 200 ms (a driver that turned slow).

The window reads 4 fake GPUs (the fake NVML library from tests/telemetry/fakenvml, built
here with gcc) every 0.1 s, offscreen. A 20 ms timer on the GUI thread repaints the whole
window synchronously on each tick, for the measuring period; figures:

- **largest gap** between two ticks of that timer (the longest the GUI thread was held):
  target < 0.5 s;
- **median repaint**, the synchronous paint of the whole window: target < 0.25 s;
- **ticks** the timer made in the period (it would make one every 20 ms on an idle machine).

Baseline, same run: the same window with the driver at full speed. The test
(tests/faults/test_faults_processes_and_slow.py) checks the behaviour, not the time: the
timer fires and the window paints while a slow call is under way in the sampling thread.

Run from the repository root: ``python benchmarks/bench_slow_driver.py [--quick]``.
"""

from __future__ import annotations

import argparse
import functools
import inspect
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "telemetry"))

import pynvml  # noqa: E402
from fakenvml import build_fake_nvml, use_fake_nvml  # noqa: E402
from machine import describe  # noqa: E402
from PySide6.QtCore import QElapsedTimer, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from gpumon.telemetry.nvml.source import NvmlSource  # noqa: E402
from gpumon.ui.window.main_window import MainWindow  # noqa: E402
from gpumon.ui.window.settings import Settings  # noqa: E402

DELAY_S = 0.2
TARGET_GAP_S = 0.5
TARGET_PAINT_S = 0.25


def slowed(delay_s: float) -> Callable[[], None]:
    """Every pynvml function sleeps ``delay_s`` first; returns what undoes it."""
    saved = dict(inspect.getmembers(pynvml, inspect.isfunction))

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)  # NvmlSource names calls by __name__
        def slow(*args: Any, **kwargs: Any) -> Any:
            time.sleep(delay_s)
            return fn(*args, **kwargs)
        return slow

    for name, fn in saved.items():
        if name.startswith("nvml"):
            setattr(pynvml, name, wrap(fn))
    return lambda: [setattr(pynvml, n, f) for n, f in saved.items() if n.startswith("nvml")]


def spin(app: QApplication, seconds: float) -> None:
    clock = QElapsedTimer()
    clock.start()
    while clock.elapsed() < seconds * 1000:
        app.processEvents()
        time.sleep(0.001)


def measure(app: QApplication, seconds: float, delay_s: float) -> tuple[float, float, int]:
    """(largest gap s, median repaint s, ticks) of a 20 ms GUI timer over ``seconds``."""
    w = MainWindow(NvmlSource, 0.1, window_s=60, settings=Settings.memory())
    w.resize(1400, 900)
    w.show()
    spin(app, 2.0)  # opened, first readings drawn
    undo = slowed(delay_s) if delay_s else (lambda: None)
    ticks: list[float] = []
    paints: list[float] = []

    def on_tick() -> None:
        ticks.append(time.monotonic())
        start = time.monotonic()
        w.repaint()
        paints.append(time.monotonic() - start)

    timer = QTimer()
    timer.timeout.connect(on_tick)
    try:
        spin(app, 1.0)  # the first slow calls are under way
        timer.start(20)
        spin(app, seconds)
    finally:
        timer.stop()
        undo()
        w.close()
        spin(app, 0.5)
    gaps = [b - a for a, b in zip(ticks, ticks[1:], strict=False)]
    return max(gaps), statistics.median(paints), len(ticks)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    seconds = 2.0 if args.quick else 6.0
    print(describe())
    app = QApplication.instance() or QApplication([])
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        lib = build_fake_nvml(Path(tmp))
        with use_fake_nvml(lib) as fake:
            fake.set_gpu_count(4)
            for label, delay in (("driver at full speed (baseline)", 0.0),
                                 (f"every call {DELAY_S * 1000:.0f} ms", DELAY_S)):
                gap, paint, n = measure(app, seconds, delay)
                print(f"{label}: largest gap {gap * 1000:.0f} ms, median repaint "
                      f"{paint * 1000:.1f} ms, {n} ticks of 20 ms in {seconds:.0f} s")
                if delay:
                    ok = gap < TARGET_GAP_S and paint < TARGET_PAINT_S
    print(f"target: largest gap < {TARGET_GAP_S * 1000:.0f} ms, median repaint < "
          f"{TARGET_PAINT_S * 1000:.0f} ms: {'met' if ok else 'NOT met'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
