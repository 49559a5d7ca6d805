"""The playground engine on its own QThread, so torch never runs in the GUI thread.

``EngineThread`` is the GUI thread's handle; an ``EngineWorker`` lives on a QThread named
``gpumon-engine`` and owns the :class:`~gpumon.playground.engine.Engine`. The thread starts
on the first request, so the window opens without paying for ``import torch``; torch is
imported on that thread (``load()`` or the first action). Actions run one at a time, in the
order they were submitted. An exception never escapes the worker: the Engine turns torch's
errors into Outcomes, and a bug in a ``call`` comes back as its result (superqt's
WorkerBase, in spirit).

API (every method is called from the GUI thread, every signal arrives in the GUI thread)::

    engine = EngineThread(parent)               # nothing started yet
    engine.loadingStarted.connect(...)          # ()       import torch began (on the thread)
    engine.loadingFinished.connect(...)         # (LoadStatus)  ok, message ("PyTorch 2.13 ...")
    engine.devicesChanged.connect(...)          # (list[DeviceOption])  after loading
    engine.outcomeReady.connect(...)            # (Outcome)  every action, whoever submitted it
    engine.actionFinished.connect(...)          # (ticket: int, Outcome)  to find your own
    engine.workspaceChanged.connect(...)        # (list[WorkspaceEntry])  after each action
    engine.busyChanged.connect(...)             # (bool)  True while anything is queued/running
    engine.queueLengthChanged.connect(...)      # (int)   submitted actions not finished yet
    engine.callFinished.connect(...)            # (ticket: int, result or exception)

    engine.load()                               # start importing torch now (optional)
    ticket = engine.submit(A.CreateTensor("x", "[1, 2, 3]"))   # queued; returns at once
    ticket = engine.call(lambda eng: eng.get("x") is not None) # any fn(Engine), on the thread
    ticket = engine.run_lesson_step(steps, 3, snapshot)  # a lesson step; StepResult by
                                                #   callFinished (the lesson's own workspace)
    engine.busy, engine.queue_length, engine.load_status, engine.device_options
    engine.stop()                               # drop what is queued, wait for the running
                                                #   action (timeout), join; idempotent

One EngineThread is made by the main window and handed to every view that needs torch
(``MainWindow.engine``): the playground and the lesson share its thread, and every view sees
every Outcome (the lesson's steps run on an Engine of their own, so a lesson never wipes the
playground's workspace). A view talks to it only through these methods and signals, so a
client of an engine in another process can take its place. ``stop()`` must be called before the
application quits (``MainWindow.closeEvent`` does); a long torch call cannot be interrupted,
so ``stop`` waits for it up to ``timeout_s`` and then leaves the thread rather than hang.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QObject, Qt, QThread, Signal, Slot

from gpumon.playground.actions import Action
from gpumon.playground.devices import DeviceOption
from gpumon.playground.engine import Engine
from gpumon.playground.lesson import LessonRunner, LessonStep, StepResult
from gpumon.playground.outcome import LoadStatus, Outcome
from gpumon.telemetry.types import Snapshot

log = logging.getLogger(__name__)

EngineCall = Callable[[Engine], Any]


class EngineWorker(QObject):
    """Lives on the engine thread; each slot runs there, in the order it was requested."""

    loadingStarted = Signal()
    loadingFinished = Signal(object)  # LoadStatus
    devicesChanged = Signal(object)  # list[DeviceOption]
    actionFinished = Signal(int, object)  # ticket, Outcome
    workspaceChanged = Signal(object)  # list[WorkspaceEntry]
    callFinished = Signal(int, object)  # ticket, result (or the exception it raised)

    def __init__(self, engine_factory: Callable[[], Engine]) -> None:
        super().__init__()
        self._factory = engine_factory
        self._engine: Engine | None = None
        self._load_reported = False
        self._cancelled = threading.Event()  # set by stop(): queued work is skipped

    def cancel(self) -> None:
        """From any thread: skip every request still queued (the running one finishes)."""
        self._cancelled.set()

    # -- slots, engine thread ----------------------------------------------------------------
    @Slot()
    def load(self) -> None:
        if not self._cancelled.is_set():
            self._ensure_loaded()

    @Slot(int, object)
    def run(self, ticket: int, action: Action) -> None:
        if self._cancelled.is_set():
            return
        engine = self._ensure_loaded()
        outcome = engine.run(action)  # never raises
        self.actionFinished.emit(ticket, outcome)
        try:
            self.workspaceChanged.emit(engine.workspace())
        except Exception:  # noqa: BLE001 - a bug here must not stop later actions
            log.exception("reading the workspace failed")

    @Slot(int, object)
    def call(self, ticket: int, fn: EngineCall) -> None:
        if self._cancelled.is_set():
            return
        engine = self._ensure_loaded()
        try:
            result = fn(engine)
        except Exception as exc:  # noqa: BLE001 - the caller gets the exception as the result
            result = exc
        self.callFinished.emit(ticket, result)
        try:
            self.workspaceChanged.emit(engine.workspace())
        except Exception:  # noqa: BLE001
            log.exception("reading the workspace failed")

    @Slot()
    def release(self) -> None:
        """Drop the engine and its tensors as the thread ends (connected to ``finished``)."""
        engine, self._engine = self._engine, None
        if engine is not None:
            engine.clear()

    def _ensure_loaded(self) -> Engine:
        engine = self._engine
        if engine is None:
            engine = self._engine = self._factory()
        if not engine.is_loaded:
            first = not self._load_reported
            if first:
                self.loadingStarted.emit()
            status = engine.ensure_loaded()  # slow: import torch
            if first:
                self._load_reported = True
                self.loadingFinished.emit(status)
                if status.ok:
                    self.devicesChanged.emit(engine.devices())
        return engine


class EngineThread(QObject):
    """The GUI thread's handle on the engine worker and its QThread (see the module doc)."""

    loadingStarted = Signal()
    loadingFinished = Signal(object)  # LoadStatus
    devicesChanged = Signal(object)  # list[DeviceOption]
    outcomeReady = Signal(object)  # Outcome
    actionFinished = Signal(int, object)  # ticket, Outcome
    workspaceChanged = Signal(object)  # list[WorkspaceEntry]
    busyChanged = Signal(bool)
    queueLengthChanged = Signal(int)
    callFinished = Signal(int, object)  # ticket, result or exception

    _req_load = Signal()
    _req_run = Signal(int, object)
    _req_call = Signal(int, object)

    def __init__(self, parent: QObject | None = None,
                 engine_factory: Callable[[], Engine] = Engine) -> None:
        super().__init__(parent)
        self._thread = QThread()
        self._thread.setObjectName("gpumon-engine")
        self.worker = EngineWorker(engine_factory)
        self.worker.moveToThread(self._thread)
        self._req_load.connect(self.worker.load)
        self._req_run.connect(self.worker.run)
        self._req_call.connect(self.worker.call)
        # Runs on the engine thread as it ends: its tensors are dropped where they were made.
        self._thread.finished.connect(self.worker.release, Qt.ConnectionType.DirectConnection)
        self.worker.loadingStarted.connect(self._on_loading_started)
        self.worker.loadingFinished.connect(self._on_loading_finished)
        self.worker.devicesChanged.connect(self._on_devices)
        self.worker.actionFinished.connect(self._on_action_finished)
        self.worker.workspaceChanged.connect(self._on_workspace)
        self.worker.callFinished.connect(self._on_call_finished)
        self._next_ticket = 0
        self._pending: set[int] = set()  # tickets submitted (actions and calls), not finished
        self._actions_pending = 0
        self._started = False
        self._stopped = False
        self._loading = False
        self.load_status: LoadStatus | None = None
        self.device_options: list[DeviceOption] = []
        self._lesson_runners: dict[tuple[LessonStep, ...], LessonRunner] = {}  # engine thread
        self._lesson_snapshot: list[Snapshot | None] = [None]  # read on the engine thread

    # -- state -----------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        """True while the engine's QThread runs."""
        return self._thread.isRunning()

    @property
    def busy(self) -> bool:
        """True while torch is loading or an action or call is queued or running."""
        return self._loading or bool(self._pending)

    @property
    def queue_length(self) -> int:
        """Actions submitted and not finished yet (the running one included)."""
        return self._actions_pending

    @property
    def loading(self) -> bool:
        return self._loading

    # -- requests --------------------------------------------------------------------------
    def load(self) -> None:
        """Start importing torch on the engine thread (a no-op once loaded or stopped)."""
        if self._ensure_started() and self.load_status is None:
            self._req_load.emit()

    def submit(self, action: Action) -> int:
        """Queue ``action``; returns its ticket (-1 when stopped). The Outcome comes later."""
        if not self._ensure_started():
            return -1
        was_busy = self.busy
        ticket = self._ticket()
        self._actions_pending += 1
        self._req_run.emit(ticket, action)
        self._changed(was_busy)
        return ticket

    def call(self, fn: EngineCall) -> int:
        """Run ``fn(engine)`` on the engine thread after what is queued; ``callFinished``."""
        if not self._ensure_started():
            return -1
        was_busy = self.busy
        ticket = self._ticket()
        self._req_call.emit(ticket, fn)
        if not was_busy:
            self.busyChanged.emit(True)
        return ticket

    def run_lesson_step(self, steps: Sequence[LessonStep], number: int,
                        snapshot: Snapshot | None) -> int:
        """Play step ``number`` of ``steps`` after what is queued; its StepResult (or the
        exception a bug raised) comes by ``callFinished``. The lesson's runner has an Engine
        of its own on the engine thread: jumping between steps clears and replays the
        runner's workspace, which must never wipe the tensors made in the Playground."""
        key = tuple(steps)
        box = [snapshot]  # what step 1's nvidia-smi shows: the snapshot taken at Run

        def play(_engine: Engine) -> StepResult:
            runner = self._lesson_runners.get(key)
            if runner is None:
                runner = LessonRunner(Engine(), lambda: self._lesson_snapshot[0], key)
                self._lesson_runners[key] = runner
            self._lesson_snapshot = box
            return runner.run_step(number)

        return self.call(play)

    def stop(self, timeout_s: float = 10.0) -> bool:
        """Skip what is queued, let the running action end, join. False if it did not end."""
        if self._stopped:
            return not self._thread.isRunning()
        self._stopped = True
        self.worker.cancel()
        if not self._thread.isRunning():
            return True
        self._thread.quit()
        ok = self._thread.wait(round(timeout_s * 1000))
        if not ok:  # a torch call that does not return: leave the thread, never the window
            log.warning("engine thread did not stop within %.1f s", timeout_s)
        was_busy = self.busy
        self._pending.clear()
        self._actions_pending = 0
        self._loading = False
        if was_busy:
            self.queueLengthChanged.emit(0)
            self.busyChanged.emit(False)
        return bool(ok)

    # -- internals -------------------------------------------------------------------------
    def _ensure_started(self) -> bool:
        if self._stopped:
            return False
        if not self._started:
            self._started = True
            self._thread.start()
        return True

    def _ticket(self) -> int:
        self._next_ticket += 1
        self._pending.add(self._next_ticket)
        return self._next_ticket

    def _changed(self, was_busy: bool) -> None:
        self.queueLengthChanged.emit(self._actions_pending)
        if self.busy != was_busy:
            self.busyChanged.emit(self.busy)

    @Slot()
    def _on_loading_started(self) -> None:
        if self._stopped:
            return
        was_busy = self.busy
        self._loading = True
        self.loadingStarted.emit()
        if not was_busy:
            self.busyChanged.emit(True)

    @Slot(object)
    def _on_loading_finished(self, status: LoadStatus) -> None:
        if self._stopped:
            return
        self._loading = False
        self.load_status = status
        self.loadingFinished.emit(status)
        if not self.busy:
            self.busyChanged.emit(False)

    @Slot(object)
    def _on_devices(self, options: list[DeviceOption]) -> None:
        if not self._stopped:
            self.device_options = list(options)
            self.devicesChanged.emit(self.device_options)

    @Slot(int, object)
    def _on_action_finished(self, ticket: int, outcome: Outcome) -> None:
        if self._stopped:
            return
        self._pending.discard(ticket)
        self._actions_pending = max(0, self._actions_pending - 1)
        self.outcomeReady.emit(outcome)
        self.actionFinished.emit(ticket, outcome)
        self._changed(was_busy=True)

    @Slot(object)
    def _on_workspace(self, entries: list[Any]) -> None:
        if not self._stopped:
            self.workspaceChanged.emit(entries)

    @Slot(int, object)
    def _on_call_finished(self, ticket: int, result: object) -> None:
        if self._stopped:
            return
        self._pending.discard(ticket)
        self.callFinished.emit(ticket, result)
        if not self.busy:
            self.busyChanged.emit(False)
