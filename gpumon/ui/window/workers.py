"""The sampling worker: a QObject that lives on its own QThread and owns the polling QTimer.

The GUI thread never calls NVML. It talks to the worker only through queued signals
(interval, pause, source switch, stop) and receives immutable Snapshots back. An exception
in a tick becomes the ``errored`` signal, never a crash (superqt's WorkerBase, in spirit).

    sampling = SamplingThread(lambda: SimulatedSource(4), interval_s=1.0)
    sampling.snapshot.connect(on_snapshot)   # Snapshot, in the GUI thread
    sampling.start()
    ...
    sampling.stop()                          # stops the timer, closes the source, joins
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, QThread, QTimer, Signal, Slot
from PySide6.QtWidgets import QWidget

from gpumon.i18n import tr
from gpumon.interval import SAMPLING
from gpumon.telemetry.model.cadence import Cadence, next_due
from gpumon.telemetry.model.types import Snapshot, Source, SourceState, SourceStatus
from gpumon.telemetry.sources.sampler import Sampler, unavailable_snapshot
from gpumon.ui.widgets.next_frame import after_next_frame
from gpumon.ui.window import gcguard

log = logging.getLogger(__name__)

SourceFactory = Callable[[], Source]
# Called in the worker thread after each tick; returns extra per-GPU series to record
# beside the GPU's own metrics, e.g. {0: {"torch_allocated_bytes": 1.2e9}}.
ExtraProvider = Callable[[Snapshot], dict[int, dict[str, float]]]

class SamplerWorker(QObject):
    """Polls a Source through a Sampler on a QTimer; lives in the sampling thread.

    Every slot runs in the worker thread; call them through SamplingThread's queued signals.
    """

    snapshot = Signal(object)  # Snapshot
    status = Signal(object)  # SourceStatus, after each open()
    errored = Signal(object)  # BaseException raised by a tick or an extra provider
    pausedChanged = Signal(bool)  # acknowledged in the worker thread
    intervalChanged = Signal(float)
    stopped = Signal()

    def __init__(self, source_factory: SourceFactory, interval_s: float) -> None:
        super().__init__()
        self._factory = source_factory
        self._interval_s = SAMPLING.clamp(interval_s)
        self._cadence = Cadence(self._interval_s)  # the period: longer when reading is slow
        self._paused = False
        self._usable = False
        self._sampler: Sampler | None = None
        self._timer: QTimer | None = None
        self._anchor = 0.0  # time.monotonic() of the cadence's first slot
        self._providers: tuple[ExtraProvider, ...] = ()
        self._lock = threading.Lock()
        self._failing: set[int] = set()  # id() of providers whose last call raised
        self.stopping = threading.Event()  # set from the GUI thread: no further tick starts

    # -- called from any thread ---------------------------------------------------------
    @property
    def next_tick_ms(self) -> int | None:
        """The delay the next reading is armed with (ms), or None while none is coming:
        not started, paused, stopped, or a reading under way."""
        timer = self._timer
        return timer.interval() if timer is not None and timer.isActive() else None

    def add_extra_provider(self, provider: ExtraProvider) -> None:
        """Register a callable that adds per-GPU extra series to every Snapshot (thread-safe)."""
        with self._lock:
            self._providers = (*self._providers, provider)

    # -- slots, worker thread -----------------------------------------------------------
    @Slot()
    def start(self) -> None:
        self._timer = QTimer(self)
        # One shot per tick, aimed at the next slot of the cadence (cadence.next_due): a
        # repeating timer fired at once after a late tick, two readings ms apart.
        self._timer.setSingleShot(True)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.timeout.connect(self._on_timer)
        thread = self.thread()
        if thread is not None:  # a bare thread.quit() must not leave the timer to another thread
            thread.finished.connect(self._timer.stop, Qt.ConnectionType.DirectConnection)
        self._open()

    @Slot(float)
    def set_interval(self, interval_s: float) -> None:
        self._interval_s = SAMPLING.clamp(interval_s)
        self._cadence.interval_s = self._interval_s
        if self._timer is not None and self._timer.isActive():
            self._start_cadence()
        self.intervalChanged.emit(self._interval_s)

    @Slot(bool)
    def set_paused(self, paused: bool) -> None:
        self._paused = bool(paused)
        self._apply_timer()
        self.pausedChanged.emit(self._paused)

    @Slot(object)
    def set_source(self, factory: SourceFactory) -> None:
        self._close_source()
        self._factory = factory
        self._open()

    @Slot()
    def stop(self) -> None:
        if self._timer is not None:
            self._timer.stop()
        self._close_source()
        self.stopped.emit()
        thread = self.thread()
        if thread is not None:
            thread.quit()

    # -- internals ------------------------------------------------------------------------
    def _start_cadence(self) -> None:
        assert self._timer is not None
        self._anchor = time.monotonic()
        self._timer.start(max(1, round(self._interval_s * 1000)))

    def _apply_timer(self) -> None:
        if self._timer is None:
            return
        if self._usable and not self._paused:
            if not self._timer.isActive():
                self._start_cadence()
        else:
            self._timer.stop()

    @Slot()
    def _on_timer(self) -> None:
        self._tick()
        timer = self._timer
        if timer is None or not self._usable or self._paused or self.stopping.is_set():
            return
        now = time.monotonic()
        period = self._cadence.period_s
        due = next_due(self._anchor, period, now)
        self._anchor = due - period  # keeps the grid; k never grows unbounded
        timer.start(max(1, round((due - now) * 1000)))

    def _open(self) -> None:
        try:
            source = self._factory()
            sampler = Sampler(source)
            status = sampler.open()
        except Exception as exc:  # a broken factory must not kill the thread
            log.exception("could not create the source")
            self._sampler = None
            self._usable = False
            status = SourceStatus(SourceState.ERROR,
                                  tr("Could not start the source: {error}", error=exc))
            self.errored.emit(exc)
            self.status.emit(status)
            self.snapshot.emit(unavailable_snapshot(status))
            self._apply_timer()
            return
        self._sampler = sampler
        self._usable = status.usable
        self.status.emit(status)
        self._tick()  # a first reading at once, or the unavailable snapshot that explains why
        self._apply_timer()

    def _close_source(self) -> None:
        sampler, self._sampler = self._sampler, None
        self._usable = False
        if sampler is None:
            return
        try:
            sampler.close()
        except Exception as exc:
            log.exception("closing the source failed")
            self.errored.emit(exc)

    @Slot()
    def _tick(self) -> None:
        sampler = self._sampler
        if sampler is None or self.stopping.is_set():
            return
        try:
            snap = sampler.tick()
            self._cadence.read_took(snap.read_duration_s)
            snap = dataclasses.replace(snap, period_s=self._cadence.period_s)
            providers = self._providers
            if providers:
                snap = self._with_extras(snap, providers)
        except Exception as exc:
            log.exception("sampling tick failed")
            self.errored.emit(exc)
            return
        self.snapshot.emit(snap)

    def _with_extras(self, snap: Snapshot, providers: tuple[ExtraProvider, ...]) -> Snapshot:
        """``snap`` with each provider's series added. A provider that raises adds nothing
        this tick, and is reported once until it works again; the snapshot still goes out."""
        extra: dict[int, dict[str, float]] = {k: dict(v) for k, v in snap.extra.items()}
        for provider in providers:
            try:
                added = provider(snap)
                for gpu, values in added.items():
                    extra.setdefault(gpu, {}).update(values)
            except Exception as exc:  # a decoration must not cost the data
                if id(provider) not in self._failing:
                    self._failing.add(id(provider))
                    log.exception("extra provider %r failed", provider)
                    self.errored.emit(exc)
            else:
                self._failing.discard(id(provider))
        return dataclasses.replace(snap, extra=extra)


class SamplingThread(QObject):
    """Owns the QThread and the SamplerWorker; the GUI thread's handle on sampling.

    Signals are re-emitted in the GUI thread. Control methods are safe to call at any time
    and take effect in the worker thread once its current tick (if any) returns.
    """

    snapshot = Signal(object)  # Snapshot
    status = Signal(object)  # SourceStatus
    errored = Signal(object)  # BaseException
    pausedChanged = Signal(bool)
    intervalChanged = Signal(float)

    _req_interval = Signal(float)
    _req_paused = Signal(bool)
    _req_source = Signal(object)
    _req_stop = Signal()

    def __init__(
        self, source_factory: SourceFactory, interval_s: float = SAMPLING.default,
        parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self._thread = QThread()
        self._thread.setObjectName("gpumon-sampler")
        self.worker = SamplerWorker(source_factory, interval_s)
        self.worker.moveToThread(self._thread)
        self._thread.started.connect(self.worker.start)
        self._req_interval.connect(self.worker.set_interval)
        self._req_paused.connect(self.worker.set_paused)
        self._req_source.connect(self.worker.set_source)
        self._req_stop.connect(self.worker.stop)
        self.worker.snapshot.connect(self._on_snapshot)
        self.worker.status.connect(self._on_status)
        self.worker.errored.connect(self._on_errored)
        self.worker.pausedChanged.connect(self._on_paused)
        self.worker.intervalChanged.connect(self._on_interval)
        self._started = False
        self._stopped = False

    @property
    def running(self) -> bool:
        return self._thread.isRunning()

    def start(self, first_frame_of: QWidget | None = None) -> None:
        """Start sampling (once). ``first_frame_of``: a window just shown; the thread
        starts once it has painted its first frame. Started at once, the source's opening
        (the simulated GPUs make their history; NVML loads the driver) held the GIL while
        the window was being laid out and painted, and the window appeared later
        (benchmarks/README.md, "Start-up: the window first"); a quick source's first
        snapshot was handled, its panels built, before the first repaint, which Qt posts at
        low priority."""
        if not self._started:
            self._started = True
            if first_frame_of is None:
                self._thread.start()
            else:
                after_next_frame(first_frame_of, self._start_thread)

    def _start_thread(self) -> None:
        if not self._stopped:
            self._thread.start()

    def set_interval(self, interval_s: float) -> None:
        self._req_interval.emit(SAMPLING.clamp(interval_s))

    def set_paused(self, paused: bool) -> None:
        self._req_paused.emit(bool(paused))

    def set_source(self, factory: SourceFactory) -> None:
        """Close the current source and open the one ``factory()`` makes, in the worker."""
        self._req_source.emit(factory)

    def add_extra_provider(self, provider: ExtraProvider) -> None:
        """Add per-GPU extra series to every Snapshot; ``provider`` runs in the worker thread."""
        self.worker.add_extra_provider(provider)

    def stop(self, timeout_s: float = 10.0) -> bool:
        """Stop the timer, close the source and join the thread. False if it did not end."""
        if self._stopped:
            return not self._thread.isRunning()
        self._stopped = True
        if not self._thread.isRunning():
            return True
        self.worker.stopping.set()  # ticks already queued behind a slow one do nothing
        self._req_stop.emit()
        ok = self._thread.wait(round(timeout_s * 1000))
        if not ok:  # a driver call hangs: leave the thread, never the window, waiting
            log.info("sampling thread did not stop within %.1f s (a driver call hangs)",
                     timeout_s)
        return bool(ok)

    @Slot(object)
    def _on_snapshot(self, snap: Snapshot) -> None:
        if not self._stopped:
            self.snapshot.emit(snap)
        gcguard.tick()  # collects here, on this wake-up, not on a timer's (gcguard.py)

    @Slot(object)
    def _on_status(self, status: SourceStatus) -> None:
        if not self._stopped:
            self.status.emit(status)

    @Slot(object)
    def _on_errored(self, exc: BaseException) -> None:
        self.errored.emit(exc)

    @Slot(bool)
    def _on_paused(self, paused: bool) -> None:
        self.pausedChanged.emit(paused)

    @Slot(float)
    def _on_interval(self, interval_s: float) -> None:
        self.intervalChanged.emit(interval_s)
