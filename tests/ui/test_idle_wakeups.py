"""An idle window wakes only for what it shows: the stale watchdog sleeps while data comes
(it woke four times a second) and still marks the data stale when it stops coming."""

from __future__ import annotations

from gpumon.telemetry.model.types import SourceState, SourceStatus
from gpumon.ui.monitor.grid import GpuGrid
from gpumon.ui.monitor.header import HeaderBar
from gpumon.ui.window.status_text import StatusText


def test_the_stale_watchdog_sleeps_while_data_comes(qtbot, make_window, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    looks: list[float] = []
    original = StatusText._check_stale

    def counting(self: StatusText) -> None:
        looks.append(1.0)
        original(self)

    monkeypatch.setattr(StatusText, "_check_stale", counting)
    w = make_window(interval_s=0.2)
    qtbot.waitUntil(lambda: w.snapshot_count >= 3, timeout=5000)
    looks.clear()
    start = w.snapshot_count
    qtbot.wait(1500)
    assert w.snapshot_count - start >= 4 and not w.stale  # fresh data all along
    assert len(looks) <= 1  # a 250 ms watchdog looked 6 times


class _Window:
    """What the status text reads of the window: a usable source, not paused."""

    interval_s = 0.2
    source_status = SourceStatus(SourceState.OK, "")
    latest_snapshot = None
    paused = False


def test_data_that_stops_coming_turns_stale_and_the_age_counts_on(qtbot) -> None:  # type: ignore[no-untyped-def]
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
