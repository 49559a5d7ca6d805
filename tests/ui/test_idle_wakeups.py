"""An idle window wakes only for what it shows: the stale watchdog sleeps while data comes
(it woke four times a second) and still marks the data stale when it stops coming."""

from __future__ import annotations

from gpumon.telemetry.model.types import SourceState, SourceStatus
from gpumon.ui.monitor.grid import GpuGrid
from gpumon.ui.monitor.header import HeaderBar
from gpumon.ui.window.status_text import MIN_STALE_S, WATCHDOG_MS, StatusText


class _Window:
    """What the status text reads of the window: a usable source, not paused."""

    interval_s = 0.2
    source_status = SourceStatus(SourceState.OK, "")
    latest_snapshot = None
    paused = False


def test_data_that_stops_coming_turns_stale_and_the_age_counts_on(qtbot) -> None:
    header, grid = HeaderBar(), GpuGrid()
    qtbot.addWidget(header)
    qtbot.addWidget(grid)
    status = StatusText(_Window(), header, grid, lambda _title: None)
    status.start(opening=False)
    status.arrived()  # the last snapshot; none comes after it
    qtbot.waitUntil(lambda: status.stale, timeout=2000)  # 2.5 intervals, at least 0.5 s
    first = header.status_line.text()
    assert "data is stale (last update" in first
    qtbot.waitUntil(lambda: header.status_line.text() != first, timeout=2000)  # counts on
    assert "data is stale (last update" in header.status_line.text()
    status.stop()


def test_each_snapshot_puts_the_stale_watchdog_off_until_the_data_would_turn_stale(
        qtbot) -> None:
    """While data comes the watchdog does not wake: each arrival moves its single shot to the
    moment the data would turn stale (2.5 intervals, at least 0.5 s); it woke every 250 ms.
    Its state is checked after each arrival rather than its wake-ups counted over a
    wall-clock window, which a loaded machine stretches (late data is rightly looked at)."""
    header, grid = HeaderBar(), GpuGrid()
    qtbot.addWidget(header)
    qtbot.addWidget(grid)
    status = StatusText(_Window(), header, grid, lambda _title: None)
    status.start(opening=False)
    watchdog = status._watchdog  # the timer under test
    try:
        for _ in range(5):
            status.arrived()  # what the window calls for each snapshot
            assert watchdog.isActive() and watchdog.isSingleShot()
            assert WATCHDOG_MS < watchdog.interval() <= MIN_STALE_S * 1000 + 1
        assert not status.stale
    finally:
        status.stop()
