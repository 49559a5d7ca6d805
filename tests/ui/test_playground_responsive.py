"""A long torch operation runs on the engine thread: the window keeps sampling and repainting."""

from __future__ import annotations

import time

from PySide6.QtCore import QTimer

from gpumon.playground import actions as A


def test_window_keeps_sampling_and_responding_during_a_long_matmul(qtbot, make_window):
    w = make_window(interval_s=0.1)
    w.tabs.setCurrentWidget(w.playground)
    qtbot.waitUntil(lambda: bool(w.engine.device_options), timeout=30000)
    panel = w.playground
    panel.submit(A.CreateFilled("a", "randn", (2800, 2800)))
    qtbot.waitUntil(lambda: panel.log.count() == 1, timeout=20000)
    qtbot.waitUntil(lambda: not w.engine.busy, timeout=5000)

    ticks: list[float] = []
    timer = QTimer()
    timer.setInterval(20)
    timer.timeout.connect(lambda: ticks.append(time.monotonic()))
    snapshots: list[float] = []
    w.snapshotReceived.connect(lambda _snap: snapshots.append(time.monotonic()))
    timer.start()
    try:
        t0 = time.monotonic()
        panel.submit(A.Compute("b", "matmul", "a", "a"))  # ~1 s of BLAS on two cores
        qtbot.waitUntil(lambda: panel.log.count() == 2, timeout=30000)
        t1 = time.monotonic()
    finally:
        timer.stop()
    outcome = panel.log.outcomes()[0]
    assert outcome.ok and outcome.shape == (2800, 2800)
    assert outcome.duration_s > 0.3, "the action was too short to show anything"
    during = [t for t in snapshots if t0 < t < t1]
    assert len(during) >= 2  # sampling went on (interval 0.1 s)
    inside = [t for t in ticks if t0 <= t <= t1]
    gaps = [b - a for a, b in zip(inside, inside[1:], strict=False)]
    assert len(inside) >= 5 and max(gaps) < 0.25  # the GUI thread kept running its timers
