"""The playground's costs: engine overhead per action, and GUI gaps during a long action.

1. Overhead: ``Engine.run(action)`` against the same torch call made directly, for small
   tensors (create, add), many repetitions, medians. Overhead = engine - direct.
   Target: <= 1 ms per action.
2. Responsiveness: the main window (8 simulated GPUs, 0.1 s sampling, offscreen) runs a
   matmul of about 2 s through the Playground page; a GUI-thread QTimer (10 ms) and the
   snapshots' arrival times are recorded meanwhile. Target: largest gap <= 2x the interval.
   The matmul is sized in the kernel after torch loaded (the engine lowers torch's
   thread count to leave the window a core), so the GUI thread never runs torch. Set
   ``OMP_NUM_THREADS=<cores>`` to measure torch on every core, as before that change.

Run from the repository root: ``python benchmarks/bench_playground.py [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import torch  # noqa: E402

from gpumon.playground.data import actions as A  # noqa: E402
from gpumon.playground.data.actions import RunCode  # noqa: E402
from gpumon.playground.kernel.engine import Engine  # noqa: E402

TARGET_MS = 1.0
INTERVAL_S = 0.1


def median_s(fn: Callable[[], object], reps: int) -> float:
    times = []
    for _ in range(reps):
        a = time.perf_counter()
        fn()
        times.append(time.perf_counter() - a)
    return statistics.median(times)


def overhead(reps: int) -> bool:
    engine = Engine()
    engine.run(A.CreateTensor("x", "[1.0, 2.0, 3.0]"))
    x = torch.tensor([1.0, 2.0, 3.0])
    cases = [
        ("x = torch.zeros(4)", lambda: engine.run(A.CreateFilled("z", "zeros", (4,))),
         lambda: torch.zeros(4)),
        ("y = x + x", lambda: engine.run(A.Compute("y", "add", "x", "x")), lambda: x + x),
        ("x = torch.tensor([1., 2., 3.])", lambda: engine.run(A.CreateTensor(
            "w", "[1.0, 2.0, 3.0]")), lambda: torch.tensor([1.0, 2.0, 3.0])),
    ]
    ok = True
    for label, via_engine, direct in cases:
        via_engine(), direct()
        e, d = median_s(via_engine, reps), median_s(direct, reps)
        met = (e - d) * 1e3 <= TARGET_MS
        ok &= met
        print(f"  {label:32s} engine {e * 1e6:7.1f} µs, direct {d * 1e6:6.1f} µs, overhead "
              f"{(e - d) * 1e6:7.1f} µs (target <= {TARGET_MS:g} ms): "
              f"{'met' if met else 'NOT met'}")
    return ok


def matmul_size_code(seconds: float) -> str:
    """Code for the kernel: the matrix size whose product takes about ``seconds`` there."""
    return (
        "import time as _time\n"
        "def _size(seconds):\n"
        "    n = 512\n"
        "    while True:\n"
        "        a = torch.rand(n, n)\n"
        "        ts = []\n"
        "        for _ in range(3):\n"
        "            t0 = _time.perf_counter(); a @ a; ts.append(_time.perf_counter() - t0)\n"
        "        t = sorted(ts)[1]\n"
        "        if t * 8 > seconds or n >= 8192:  # the next doubling would overshoot\n"
        "            return int(n * (seconds / t) ** (1 / 3))\n"
        "        n *= 2\n"
        f"_size({seconds!r})")


def responsiveness(seconds: float) -> bool:
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from gpumon.telemetry.sources.simulated import SimulatedSource
    from gpumon.ui.window.main_window import MainWindow

    app = QApplication.instance() or QApplication(sys.argv)
    w = MainWindow(lambda: SimulatedSource(8), INTERVAL_S, window_s=300)
    w.resize(1400, 900)
    w.show()
    w.tabs.setCurrentWidget(w.playground)  # loads torch in the kernel
    panel = w.playground
    # Sized in the kernel after loading (it may lower torch's thread count), so this
    # process never runs torch, as in the app.
    sized: list[int] = []
    w.kernel_link.actionFinished.connect(lambda _t, o: sized.append(int(o.preview)))
    w.kernel_link.submit(RunCode(matmul_size_code(seconds)))
    while not sized:
        app.processEvents()
        time.sleep(0.001)
    w.kernel_link.actionFinished.disconnect()
    n = sized[0]
    status = w.kernel_link.load_status
    print(f"  {status.status_text() if status else 'PyTorch did not load'}")
    done: list[float] = []
    w.kernel_link.outcomeReady.connect(lambda o: done.append(o.duration_s))
    for action in (A.CreateFilled("a", "rand", (n, n)), A.CreateFilled("b", "rand", (n, n))):
        panel.submit(action)
    while len(done) < 2:
        app.processEvents()
    settle = time.monotonic() + 1.0  # let the GUI show those two outcomes first: their
    while time.monotonic() < settle:  # rendering is not what this measures
        app.processEvents()
        time.sleep(0.001)
    ticks: list[float] = []
    arrivals: list[float] = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(time.monotonic()))
    w.snapshotReceived.connect(lambda _s: arrivals.append(time.monotonic()))
    timer.start(10)
    start = time.monotonic()
    panel.submit(A.Compute("c", "matmul", "a", "b"))
    while len(done) < 3 and time.monotonic() - start < 60:
        app.processEvents()
        time.sleep(0.001)
    end = time.monotonic()
    timer.stop()
    w.close()

    def max_gap(stamps: list[float]) -> float:
        inside = [start, *[s for s in stamps if start <= s <= end], end]
        return max(b - a for a, b in zip(inside, inside[1:], strict=False))

    tick_gap, snap_gap = max_gap(ticks), max_gap(arrivals)
    limit = 2 * INTERVAL_S
    met = tick_gap <= limit and snap_gap <= limit
    print(f"  matmul {n}x{n}: {done[-1]:.2f} s of torch work, {end - start:.2f} s wall")
    print(f"  largest gap: GUI timer {tick_gap * 1e3:.0f} ms, snapshots {snap_gap * 1e3:.0f} ms "
          f"(interval {INTERVAL_S * 1e3:.0f} ms; target <= {limit * 1e3:.0f} ms): "
          f"{'met' if met else 'NOT met'}")
    return met


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args()
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    print("engine overhead per action:")
    ok = overhead(300 if args.quick else 3000)
    print("GUI during a ~2 s torch action in the Playground page:")
    ok &= responsiveness(2.0)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
