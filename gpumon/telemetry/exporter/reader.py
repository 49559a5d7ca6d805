"""The exporter's reading side: one thread reads the GPUs on its own cadence, with a deadline.

A scrape never calls the driver: ``GpuReader`` reads in a daemon thread every ``interval_s``
(the slow fields, PCIe throughput and the power limit among them, every ``slow_every_s``) and
hands each reading, as a ``View``, to whoever renders it. A watchdog thread marks the driver
as not answering when a read has made no progress for ``read_timeout_s`` (no NVML call
started: one hangs), and hands on a View without GPU values; when the call returns, the next
reading brings everything back. Stopping never waits on a hung call: the threads are daemons.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from gpumon.interval import EXPORTER
from gpumon.telemetry.exporter.series import View
from gpumon.telemetry.model.types import GpuInfo, Snapshot, Source, SourceState, SourceStatus
from gpumon.telemetry.sources.sampler import Sampler

log = logging.getLogger(__name__)

DEFAULT_PORT = 9401  # beside dcgm-exporter's 9400
DEFAULT_LISTEN = f"127.0.0.1:{DEFAULT_PORT}"
DEFAULT_READ_TIMEOUT_S = 5.0  # below Prometheus's default scrape timeout of 10 s
WATCH_EVERY_S = 0.1  # how often the watchdog looks at a read in progress


def open_source(factory: Callable[[], Source], sampler: Sampler | None,
                slow_every_s: float) -> tuple[Sampler | None, Source | None, SourceStatus]:
    """A new sampler over a new source (the old one closed), and what opening said."""
    if sampler is not None:
        sampler.close()
    try:
        source = factory()
    except Exception as exc:  # e.g. nvidia-ml-py is not installed
        return None, None, SourceStatus(
            SourceState.ERROR, f"gpumon could not load its NVML support "
            f"({type(exc).__name__}: {exc}).", "Install nvidia-ml-py.")
    sampler = Sampler(source, slow_every_s=slow_every_s)
    return sampler, source, sampler.open()


def read_times(snap: Snapshot) -> dict[str, float]:
    """When each GPU of a reading (by UUID) was read, the lost ones left out."""
    uuids = {g.index: g.uuid for g in snap.gpus}
    return {uuids[s.index]: s.timestamp_s for s in snap.samples
            if not s.lost and s.index in uuids}


def _status_text(status: SourceStatus) -> str:
    return status.message if not status.hint else f"{status.message} {status.hint}"


class GpuReader:
    """Reads a Source in a daemon thread and publishes a View after each reading.

    ``publish`` is called with every new View, from the reader or the watchdog thread (one
    at a time); it should be quick (the exporter renders the page there).
    """

    def __init__(self, source_factory: Callable[[], Source],
                 publish: Callable[[View], None],
                 interval_s: float = EXPORTER.default,
                 read_timeout_s: float = DEFAULT_READ_TIMEOUT_S,
                 slow_every_s: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._factory = source_factory
        self._publish_to = publish
        self.interval_s = interval_s
        self.read_timeout_s = read_timeout_s
        self.slow_every_s = max(5.0, interval_s) if slow_every_s is None else slow_every_s
        self._clock = clock
        self._stop = threading.Event()
        self._busy = threading.Event()  # a reading is in progress (the watchdog looks then)
        self._lock = threading.Lock()  # guards the state below and the order of publishes
        self._sampler: Sampler | None = None
        self._source: Source | None = None
        self._snapshot: Snapshot | None = None
        self._status: SourceStatus | None = None
        self._gpus: dict[str, GpuInfo] = {}
        self._last_read: dict[str, float] = {}
        self._reading_since: float | None = None  # clock time the read in progress began
        self._progress_at = 0.0  # clock time its calls were last seen to move
        self._calls_seen = -1
        self._stuck = False
        self._seq = 0
        self._driver = ""  # kept while the driver does not answer: the series keep their labels
        self._logged: str | None = None
        self.readings = 0  # readings finished so far
        self._threads = [threading.Thread(target=self._read_loop, name="gpumon-exporter-read",
                                          daemon=True),
                         threading.Thread(target=self._watch_loop,
                                          name="gpumon-exporter-watchdog", daemon=True)]

    # --- life --------------------------------------------------------------------------------

    def start(self) -> None:
        """Publish the starting View, then start reading."""
        with self._lock:
            self._publish(up=False, healthy=False,
                          reason="starting: the GPUs have not been read yet")
        for t in self._threads:
            t.start()

    def stop(self, timeout_s: float = 1.0) -> bool:
        """Stop reading; False when a driver call still hangs after ``timeout_s`` (the
        reader thread is then left behind: a daemon, it does not hold the process open)."""
        self._stop.set()
        self._busy.set()  # wakes the watchdog, which then sees the stop
        deadline = time.monotonic() + timeout_s
        for t in self._threads:
            if t.is_alive():
                t.join(max(0.0, deadline - time.monotonic()))
        reader = self._threads[0]
        if reader.is_alive():
            log.warning("a GPU driver call still hangs; exiting without closing NVML")
            return False
        return True

    # --- the reader thread ----------------------------------------------------------------------

    def _read_loop(self) -> None:
        try:
            while not self._stop.is_set():
                started = self._clock()
                try:
                    self._read_once()
                except Exception:  # a bug of ours: log it, say so, and read again
                    log.exception("reading the GPUs failed")
                    self._busy.clear()
                    with self._lock:
                        self._reading_since = None
                        self._publish(up=False, healthy=False,
                                      reason="reading the GPUs failed; see the exporter's log")
                wait = self.interval_s - (self._clock() - started)
                self._stop.wait(max(wait, 0.0))
        finally:
            if self._sampler is not None:  # in this thread: never while a call of ours hangs
                self._sampler.close()

    def _read_once(self) -> None:
        with self._lock:
            self._reading_since = self._progress_at = self._clock()
        self._busy.set()
        status = self._sampler.status if self._sampler is not None else None
        if status is None or not status.usable:  # first read, or no driver yet: (re)open
            self._sampler, self._source, status = open_source(
                self._factory, self._sampler, self.slow_every_s)
        snap = self._sampler.tick() if self._sampler is not None and status.usable else None
        self._busy.clear()
        with self._lock:
            self._reading_since = None
            self.readings += 1
            self._snapshot = snap
            self._status = snap.status if snap is not None else status
            if snap is not None and snap.status.usable:
                for info in snap.gpus:
                    self._gpus[info.uuid] = info
                self._last_read.update(read_times(snap))
            if self._stuck:
                log.info("the GPU driver answers again")
            self._stuck = False
            self._publish_reading()

    def _publish_reading(self) -> None:
        snap, status = self._snapshot, self._status
        assert status is not None
        self._log_status(status)
        if snap is None or not status.usable:
            self._publish(up=False, healthy=False, reason=_status_text(status))
            return
        lost = sum(1 for s in snap.samples if s.lost) + max(0, len(snap.gpus) - len(snap.samples))
        n = len(snap.gpus)
        if n and lost == n:
            self._publish(up=True, healthy=False, reason=f"every GPU is lost ({n} of {n})")
        elif lost:
            self._publish(up=True, healthy=True,
                          reason=f"ok: {n - lost} of {n} GPUs answer, {lost} lost")
        else:
            self._publish(up=True, healthy=True, reason=f"ok: {status.message}")

    # --- the watchdog thread --------------------------------------------------------------------

    def _watch_loop(self) -> None:
        # Only while a reading is in progress: between readings it sleeps (ten wake-ups a
        # second were 0.75 ms of CPU a second, a tenth of an idle exporter's at 8 GPUs).
        while self._busy.wait() and not self._stop.wait(WATCH_EVERY_S):
            self.watch()

    def watch(self) -> None:
        """Mark the driver as not answering when the read in progress stands still."""
        calls = getattr(self._source, "calls_started", None)  # NvmlSource counts its calls
        with self._lock:
            if self._reading_since is None or self._stuck:
                return
            now = self._clock()
            if calls is not None and calls != self._calls_seen:
                self._calls_seen, self._progress_at = calls, now
            still = now - max(self._progress_at, self._reading_since)
            if still < self.read_timeout_s:
                return
            self._stuck = True
            reason = (f"the GPU driver has not answered for {self.read_timeout_s:g} s "
                      "(a driver call hangs)")
            log.warning("gpumon_nvml_up 0: %s; GPU values are left out until it answers",
                        reason)
            self._logged = None
            self._publish(up=False, healthy=False, reason=reason)

    # --- publishing -----------------------------------------------------------------------------

    def _publish(self, up: bool, healthy: bool, reason: str) -> None:
        """Hand on a new View (the lock is held: Views leave in the order they are made)."""
        self._seq += 1
        if self._snapshot is not None and self._snapshot.machine.driver_version:
            self._driver = self._snapshot.machine.driver_version
        view = View(self._snapshot, up, reason, healthy, tuple(self._gpus.values()),
                    dict(self._last_read), self._seq, self._driver)
        try:
            self._publish_to(view)
        except Exception:  # a bug of the renderer must not stop the reading
            log.exception("publishing a reading failed")

    def _log_status(self, status: SourceStatus) -> None:
        """Log the source's state when it changes (not on every reading)."""
        text = _status_text(status)
        if text == self._logged:
            return
        self._logged = text
        if status.usable:
            log.info("GPU source ready: %s", status.message)
        else:
            log.warning("no GPU data (gpumon_nvml_up 0): %s", text)
