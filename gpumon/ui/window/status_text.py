"""What the header's status text and the window title say about the data on screen.

The text is the sampling summary, "Paused", "No GPU data", a count while a driver is slow to
give its first reading, or that the data is stale: a watchdog marks it so when no snapshot
came for ``STALE_FACTOR`` intervals. The watchdog wakes when the data would turn stale (each
snapshot moves that moment on), not four times a second; it wakes every :data:`WATCHDOG_MS`
only while the text counts seconds (waiting, stale). The title names the machine, and says
when its GPUs are simulated or unreadable. The window tells ``StatusText`` what happened; it
reads the rest (paused, interval, source status, latest snapshot) from the window when it
needs it.
"""

from __future__ import annotations

import math
import socket
import time
from collections.abc import Callable
from typing import Protocol

from PySide6.QtCore import QObject, QTimer, Slot

from gpumon.i18n import tr
from gpumon.telemetry.model.readouts import status_summary
from gpumon.telemetry.model.types import Snapshot, SourceState, SourceStatus
from gpumon.ui.monitor.grid import GpuGrid
from gpumon.ui.monitor.header import HeaderBar

STALE_FACTOR = 2.5  # no snapshot for this many intervals: the data is stale
MIN_STALE_S = 0.5  # but never sooner than this, so event-loop jitter does not flicker
WATCHDOG_MS = 250
WAIT_NOTICE_S = 1.0  # a source that has not answered after this long: say we are waiting


class Watched(Protocol):
    """What the status text reads of the window."""

    interval_s: float
    source_status: SourceStatus
    latest_snapshot: Snapshot | None

    @property
    def paused(self) -> bool: ...


class StatusText(QObject):
    """The header's status text, the grid's stale look, and the window title."""

    def __init__(self, window: Watched, header: HeaderBar, grid: GpuGrid,
                 set_title: Callable[[str], None], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._window = window
        self._header = header
        self._grid = grid
        self._set_title = set_title
        self.stale = False
        self._last_arrival: float | None = None  # time.monotonic() of the last snapshot
        self._opening_since: float | None = None  # a source is being opened since then
        self._title_key: tuple[str, bool, bool] | None = None
        self._watchdog = QTimer(self)
        self._watchdog.setSingleShot(True)
        self._watchdog.timeout.connect(self._check_stale)
        self._watching = False

    def start(self, opening: bool) -> None:
        """Sampling starts; ``opening``: no reading yet, so count while the source opens."""
        if opening:
            self._opening_since = time.monotonic()
            self._grid.set_empty_text(tr("Reading the GPUs…"))  # not "No GPUs to show."
            self._header.show_waiting(tr("Starting…"))  # a WAITING badge, not NO SOURCE
        if not self._watching:
            self._watching = True
            self._arm()

    def stop(self) -> None:
        self._watching = False
        self._watchdog.stop()

    def stale_after_s(self) -> float:
        """Seconds without a reading after which the data is called stale: a multiple of
        the time between readings, which is the period where reading takes longer than the
        interval."""
        snap = self._window.latest_snapshot  # readings further apart when reading is slow
        period = max(self._window.interval_s, snap.period_s if snap is not None else 0.0)
        return max(STALE_FACTOR * period, MIN_STALE_S)

    def _arm(self) -> None:
        """Wake at the moment the data turns stale; in :data:`WATCHDOG_MS` while a count
        of seconds is shown, nothing came yet, or that moment passed without staleness
        (paused, no usable source)."""
        if not self._watching:
            return
        due_ms = WATCHDOG_MS
        if self._opening_since is None and not self.stale and self._last_arrival is not None:
            due = self._last_arrival + self.stale_after_s() - time.monotonic()
            if due > 0.0:
                due_ms = math.ceil(due * 1000) + 1
        self._watchdog.start(due_ms)

    def arrived(self) -> None:
        """A snapshot came: no more waiting (the grid's empty text is its own again)."""
        if self._opening_since is not None:
            self._opening_since = None
            self._grid.set_empty_text()
        self._last_arrival = time.monotonic()
        self._arm()

    def shown(self, snap: Snapshot) -> None:
        """The views show ``snap``: fresh data, its summary and its machine in the title."""
        self.set_stale(False)
        self.refresh()
        self.update_title(snap)

    def restart_clock(self, fresh: bool = False) -> None:
        """Count staleness from now (a new interval, a pause); ``fresh``: not stale now."""
        if fresh:
            self.set_stale(False)
        self._last_arrival = time.monotonic()
        self._arm()

    def refresh(self) -> None:
        w = self._window
        snap = w.latest_snapshot
        if not w.source_status.usable:
            self._header.set_status_text(tr("No GPU data"), warn=True)
        elif w.paused:
            self._header.set_status_text(tr("Paused — press Resume to continue sampling"))
        elif snap is not None:
            self._header.set_status_text(status_summary(snap, w.interval_s))

    def update_title(self, snap: Snapshot | None) -> None:
        """The machine in the title, and "(no GPU data)" as soon as the source says so: a
        status that arrives before any reading (the driver is not loaded) counts too."""
        status = self._window.source_status
        host = snap.machine.host_name if snap is not None else socket.gethostname()
        simulated = snap is not None and snap.simulated
        no_data = not status.usable and (snap is not None
                                         or status.state is not SourceState.CLOSED)
        key = (host, simulated, no_data)
        if key == self._title_key:
            return
        self._title_key = key
        if simulated:
            where = tr("{host} (simulated)", host=host)
        elif no_data:
            where = tr("{host} (no GPU data)", host=host)
        else:
            where = host
        self._set_title(f"gpumon — {where}")

    def set_stale(self, stale: bool) -> None:
        if stale != self.stale:
            self.stale = stale
            self._grid.set_stale(stale)

    @Slot()
    def _check_stale(self) -> None:
        try:
            self._look()
        finally:
            self._arm()

    def _look(self) -> None:
        if self._opening_since is not None:
            self._show_waiting(time.monotonic() - self._opening_since)
            return
        w = self._window
        if w.paused or not w.source_status.usable or self._last_arrival is None:
            return
        age = time.monotonic() - self._last_arrival
        if age > self.stale_after_s():
            self.set_stale(True)
            self._header.set_status_text(
                tr("data is stale (last update {age} s ago)", age=f"{age:.0f}"), warn=True)

    def _show_waiting(self, waited_s: float) -> None:
        """A driver that is slow to start (nvmlInit can take ~10 s, or hang), or whose first
        reading hangs: say so and count until the first Snapshot, instead of "NO SOURCE"
        and "No GPUs to show." with no end in sight."""
        if waited_s < WAIT_NOTICE_S:
            return
        text = tr("Waiting for the NVIDIA driver: {seconds} s", seconds=f"{waited_s:.0f}")
        self._header.show_waiting(text)
        self._grid.set_empty_text(f"{text}…")
