"""A long torch operation runs in the kernel: the window keeps sampling and repainting.

The torch work is a loop of matrix products that runs until a fixed wall time has passed in
the kernel, so the test proves the same thing on a fast or a loaded machine: a GUI
thread blocked by torch would show one gap as long as the whole call.
"""

from __future__ import annotations

import ast
import time

import pytest
from PySide6.QtCore import QTimer

from gpumon.playground.data import actions as act
from gpumon.playground.data.actions import RunCode
from gpumon.playground.data.outcome import Outcome

BUSY_S = 1.5  # torch work in the kernel, whatever the machine's speed


def matmuls_for(seconds: float) -> RunCode:
    """Code for the kernel: ``a @ a`` until ``seconds`` passed; its value (count, start, end).

    time.monotonic() is the system-wide monotonic clock, so the kernel's readings compare
    with this process's."""
    return RunCode(f"import time\n_t0 = time.monotonic()\n_n = 0\n"
                   f"while time.monotonic() - _t0 < {seconds}:\n    a @ a\n    _n += 1\n"
                   f"(_n, _t0, time.monotonic())")


@pytest.mark.slow
def test_window_keeps_sampling_and_responding_during_a_long_matmul(qtbot, make_window):
    w = make_window(interval_s=0.1)
    w.tabs.setCurrentWidget(w.playground)
    qtbot.waitUntil(lambda: bool(w.kernel_link.device_options), timeout=30000)
    panel = w.playground
    panel.submit(act.CreateFilled("a", "randn", (600, 600)))
    qtbot.waitUntil(lambda: panel.log.count() == 1, timeout=20000)
    qtbot.waitUntil(lambda: not w.kernel_link.busy, timeout=5000)

    ticks: list[float] = []
    timer = QTimer()
    timer.setInterval(20)
    timer.timeout.connect(lambda: ticks.append(time.monotonic()))
    snapshots: list[float] = []
    w.snapshotReceived.connect(lambda _snap: snapshots.append(time.monotonic()))
    results: list[Outcome] = []
    w.kernel_link.actionFinished.connect(lambda _ticket, outcome: results.append(outcome))
    timer.start()
    try:
        w.kernel_link.submit(matmuls_for(BUSY_S))
        qtbot.waitUntil(lambda: bool(results), timeout=60000)
    finally:
        timer.stop()
    assert results[0].ok, results[0].error
    result = ast.literal_eval(results[0].preview)
    assert isinstance(result, tuple), result
    count, t0, t1 = result
    assert count >= 1 and t1 - t0 >= BUSY_S
    during = [t for t in snapshots if t0 < t < t1]
    assert len(during) >= 2  # sampling went on (interval 0.1 s, for at least 1 s)
    inside = [t0, *[t for t in ticks if t0 <= t <= t1], t1]
    gaps = [b - a for a, b in zip(inside, inside[1:], strict=False)]
    assert len(inside) >= 5  # the GUI thread ran its timers during the torch work ...
    assert max(gaps) < 1.0  # ... and was never held for most of the call (no freeze)
