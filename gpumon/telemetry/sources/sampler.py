"""Sampler: one ``tick()`` reads one Snapshot from a source. Plain calls; no threads, no timers.

The caller (a worker thread in the app, a loop in a script, a test) decides when to tick.
The sampler asks for the slow-changing fields only every ``slow_every_s`` seconds, measures
how long the read took, and turns anything a source raises into a Snapshot with an ERROR
status, so the caller never has to catch.
"""

from __future__ import annotations

import dataclasses
import socket
import time
from collections.abc import Callable

from gpumon.i18n import tr
from gpumon.telemetry.model.types import MachineInfo, Snapshot, Source, SourceState, SourceStatus


def _closed() -> SourceStatus:
    """The status of a source not opened yet, or closed (its words in today's language)."""
    return SourceStatus(SourceState.CLOSED, tr("The GPU source is closed."))


def unavailable_snapshot(
    status: SourceStatus, machine: MachineInfo | None = None, timestamp_s: float | None = None
) -> Snapshot:
    """A Snapshot with no GPUs that carries why there is no data (a source that won't open)."""
    if machine is None:
        machine = MachineInfo(host_name=socket.gethostname(), source_name="none")
    return Snapshot(
        timestamp_s=time.time() if timestamp_s is None else timestamp_s,
        machine=machine,
        status=status,
        simulated=machine.simulated,
    )


def _describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class Sampler:
    """Reads snapshots from one source; ``tick()`` never raises."""

    def __init__(
        self,
        source: Source,
        slow_every_s: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        """``clock`` times reads and the slow-field cadence; ``wall_clock`` stamps the
        snapshots the sampler makes itself (errors, unavailable)."""
        self._source = source
        self._slow_every_s = slow_every_s
        self._clock = clock
        self._wall_clock = wall_clock
        self._status = _closed()
        self._machine: MachineInfo | None = None
        self._opened = False
        self._open_status = self._status  # what open() said; a failed read does not change it
        self._last_slow: float | None = None  # clock time of the last good slow read

    @property
    def status(self) -> SourceStatus:
        """The status of the last open() or tick()."""
        return self._status

    @property
    def machine(self) -> MachineInfo | None:
        """The source's machine facts, once opened and known."""
        return self._machine

    def open(self) -> SourceStatus:
        """Open the source; never raises. A raising source gives an ERROR status."""
        try:
            self._status = self._source.open()
        except Exception as exc:  # a source must not raise; report it if one does
            self._status = SourceStatus(
                SourceState.ERROR,
                tr("Opening the GPU source failed ({error}).", error=_describe(exc)),
                tr("This is a bug in gpumon's source; please report it."),
            )
        self._opened = True
        self._open_status = self._status
        self._last_slow = None
        if self._status.usable:
            try:
                self._machine = self._source.machine()
            except Exception:
                self._machine = None
        return self._status

    def tick(self, slow: bool = False) -> Snapshot:
        """Read one Snapshot now, opening the source first if that was not done; ``slow``:
        read the slow fields (process details, host CPU) even before they are due."""
        if not self._opened:
            self.open()
        if not self._open_status.usable:
            self._status = self._open_status
            return unavailable_snapshot(self._status, self._machine, self._wall_clock())
        start = self._clock()
        include_slow = (slow or self._last_slow is None
                        or start - self._last_slow >= self._slow_every_s)
        try:
            snapshot = self._source.sample(include_slow=include_slow)
        except Exception as exc:
            self._status = SourceStatus(
                SourceState.ERROR, tr("Reading the GPUs failed ({error}).",
                                      error=_describe(exc)),
                tr("gpumon will try again on the next tick."),
            )
            return unavailable_snapshot(self._status, self._machine, self._wall_clock())
        duration = self._clock() - start
        if include_slow:
            self._last_slow = start
        self._status = snapshot.status
        if snapshot.read_duration_s > 0.0:  # the source timed its own read (NvmlSource does)
            return snapshot  # and a replace() would cost ~10% of a 1-GPU tick
        return dataclasses.replace(snapshot, read_duration_s=duration)

    def close(self) -> None:
        """Close the source; never raises. Later ticks report CLOSED."""
        if self._opened:
            try:
                self._source.close()
            except Exception:
                pass
        self._opened = True  # do not reopen on the next tick: closed means closed
        self._open_status = self._status = _closed()
