"""The GUI thread's handle on the playground kernel, a child process that owns torch.

``KernelLink`` gives the views signals and calls as if torch ran in the window; behind them a
:class:`~gpumon.playground.client.kernel_client.KernelClient` runs the Engine in another process
(``python -m gpumon.playground.kernel.main``), so the window never imports torch, a long
operation can be stopped, and a crash of torch costs the workspace, never the window.
Requests are answered in the order they were sent; the kernel starts on the first request
(the window asks for ``load()`` once its first frame is painted).

API (every method is called from the GUI thread, every signal arrives in the GUI thread)::

    link = KernelLink(parent)               # nothing started yet
    link.loadingStarted / loadingFinished(LoadStatus) / devicesChanged(list[DeviceOption])
    link.loadingLost(KernelExit)              # the kernel ended before torch loaded
    link.outcomeReady(Outcome)                # every action, whoever submitted it, and
                                                # each action of a lesson step as it runs
    link.actionFinished(ticket, Outcome)      # to find your own
    link.workspaceChanged(WorkspacePage)      # the first rows and the count of the rest
    link.busyChanged(bool), link.queueLengthChanged(int)
    link.callFinished(ticket, result)         # a call's answer, or the exception for it
    link.kernelStarted(pid)                   # a (fresh) kernel said hello
    link.kernelEnded(KernelExit, bool)        # it died, or was killed and restarted
    link.countersChanged(dict)                # {cuda index: (allocated, reserved)}

    link.load()                               # start the kernel and import torch there
    ticket = link.submit(A.CreateTensor("x", "[1, 2, 3]"))   # queued; returns at once
    ticket = link.call("names")               # a kernel request by name ("workspace", ...)
    ticket = link.run_lesson_step(steps, 3, snapshot)  # StepResult by callFinished
    link.interrupt()                          # Stop: SIGINT, kill + restart after 2 s
    link.stop()                               # shut the kernel down (quit); idempotent
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal, Slot

from gpumon.i18n import sentences, tr
from gpumon.playground.client.interrupt import Interrupted
from gpumon.playground.client.kernel_client import KernelClient, KernelExit
from gpumon.playground.client.ssh_kernel import Remote
from gpumon.playground.data.actions import Action
from gpumon.playground.data.devices import DeviceOption
from gpumon.playground.data.errors import ErrorInfo
from gpumon.playground.data.outcome import LoadStatus, Outcome, WorkspacePage
from gpumon.playground.data.wire import Message
from gpumon.playground.lesson.checkpoint_path import remove_folders_of
from gpumon.playground.lesson.steps import LessonStep
from gpumon.remote.source import kernels as remote_kernels
from gpumon.telemetry.model.types import Snapshot
from gpumon.telemetry.procs.procinfo import set_own_children
from gpumon.untrusted import for_terminal


class KernelInterrupted(Exception):
    """A call's answer when Stop interrupted it."""


class KernelInternalError(Exception):
    """A call's answer when gpumon's own code failed in the kernel; holds the traceback."""


class KernelLost(Exception):
    """A call's answer when the kernel died before answering."""


class KernelRefused(Exception):
    """A call's answer when the request was never sent (over the size of a message)."""


def interrupted_error() -> ErrorInfo:
    """The card of code that Stop interrupted in time."""
    return ErrorInfo("KeyboardInterrupt", tr("Stopped by the Stop button."),
                     tr("The code was interrupted (KeyboardInterrupt); the kernel and its "
                        "workspace are kept."), by_torch=False)


def load_failed_text(kind: str) -> str:
    """Why torch is not there when the kernel's answer to "load" was not a reply: Stop
    pressed while it loaded, or a bug of gpumon's (the kernel client logs its traceback)."""
    if kind == "interrupted":
        return tr("PyTorch did not load: Stop was pressed while it was loading. Run an "
                  "action to load it again.")
    return tr("PyTorch did not load: gpumon failed while loading it. This is a bug in "
              "gpumon; please report it.")


def load_lost_text(ended: KernelExit) -> str:
    """The status when the kernel ended while torch was loading: no "Loading…" outlives it."""
    return sentences(tr("PyTorch did not finish loading."), ended.sentence(),
                     tr("The next action starts a fresh kernel and loads it again."))


def internal_error(trace: str) -> ErrorInfo:
    """A bug of gpumon's, with its traceback: never shown as torch's error."""
    return ErrorInfo("InternalError", trace.rstrip(),
                     tr("This is a bug in gpumon, not a torch error; please report it."),
                     by_torch=False)


def refused_error(sentence: str) -> ErrorInfo:
    """The card of a request that was never sent (over the size of a message)."""
    return ErrorInfo("Refused", sentence, tr("Nothing was sent to the kernel; it and its "
                                             "workspace are as they were."), by_torch=False)


def lost_error(ended: KernelExit) -> ErrorInfo:
    """The card of an action whose kernel ended before answering."""
    kind = {"died": "KernelDied", "protocol": "KernelStopped",
            "closed its output": "KernelStopped"}.get(ended.reason, "KernelRestarted")
    if kind == "KernelStopped":  # the kernel's own card (ended_outcome) says why
        return ErrorInfo(kind, tr("The playground kernel (pid {pid}) was stopped before it "
                                  "answered this; the kernel's own card says why.",
                                  pid=ended.pid),
                         tr("{lost} The next action starts a fresh kernel.",
                            lost=ended.lost_text()), by_torch=False)
    return ErrorInfo(kind, ended.sentence(),
                     tr("{lost} The next action starts a fresh kernel.",
                        lost=ended.lost_text()),
                     by_torch=False)


@dataclass(frozen=True)
class KernelNotice(Action):
    """Not an action: the log's card for something that happened to the kernel."""

    what: str

    def code(self) -> str:
        return f"# {self.what}"


def ended_outcome(ended: KernelExit) -> Outcome:
    """The log's card for a kernel that died, or was killed and restarted."""
    if ended.reason == "died":
        error = ErrorInfo("KernelDied", ended.sentence(),
                          tr("{lost} The monitor kept running; the next action starts a "
                             "fresh kernel.", lost=ended.lost_text()), by_torch=False)
        what = tr("the playground kernel died")
    elif ended.reason == "killed after interrupt":
        error = ErrorInfo("KernelRestarted",
                          tr("The code did not stop within 2 s of Stop, so the kernel (pid "
                             "{pid}) was {how} and restarted.", pid=ended.pid,
                             how=ended.how()),
                          tr("{lost} A fresh kernel is ready.", lost=ended.lost_text()),
                          by_torch=False)
        what = tr("Stop: the kernel was killed and restarted")
    elif ended.reason == "killed during start-up":
        error = ErrorInfo("KernelRestarted",
                          tr("Stop came while the kernel was still starting (importing "
                             "torch), which cannot be interrupted safely, so the kernel (pid "
                             "{pid}) was {how} and restarted.", pid=ended.pid,
                             how=ended.how()),
                          tr("The code queued behind the start never ran. {lost} A fresh "
                             "kernel is loading torch.", lost=ended.lost_text()),
                          by_torch=False)
        what = tr("Stop during start-up: the kernel was killed and restarted")
    elif ended.reason in ("protocol", "closed its output"):
        headline = tr("The playground kernel (pid {pid}) sent the window something it cannot "
                      "read ({why}), so the kernel was stopped.", pid=ended.pid,
                      why=ended.detail) if ended.reason == "protocol" else \
            tr("The playground kernel (pid {pid}) closed its connection to the window while "
               "still running, so it was stopped.", pid=ended.pid)
        error = ErrorInfo("KernelStopped", headline,
                          tr("{lost} The monitor kept running; the next action starts a "
                             "fresh kernel.", lost=ended.lost_text()), by_torch=False)
        what = tr("the playground kernel was stopped")
    else:
        error = ErrorInfo("KernelRestarted",
                          tr("The kernel (pid {pid}) was restarted.", pid=ended.pid),
                          ended.lost_text(), by_torch=False)
        what = tr("the kernel was restarted")
    return Outcome(KernelNotice(what), f"# {what}", False, time.time(), 0.0, error=error)


class _Bridge(QObject):
    """Carries the client's messages from its reader thread into the GUI thread."""

    message = Signal(object)


class KernelLink(QObject):
    """The views' handle on the kernel (see the module doc)."""

    loadingStarted = Signal()
    loadingFinished = Signal(object)  # LoadStatus
    loadingLost = Signal(object)  # KernelExit: the kernel ended before torch loaded
    devicesChanged = Signal(object)  # list[DeviceOption]
    outcomeReady = Signal(object)  # Outcome
    actionFinished = Signal(int, object)  # ticket, Outcome
    workspaceChanged = Signal(object)  # WorkspacePage
    busyChanged = Signal(bool)
    queueLengthChanged = Signal(int)
    callFinished = Signal(int, object)  # ticket, result or exception
    kernelStarted = Signal(int)  # pid
    kernelEnded = Signal(object, bool)  # KernelExit; True: a lost action's card says it
    countersChanged = Signal(object)  # {cuda index: (allocated, reserved)}

    def __init__(self, parent: QObject | None = None, remote: Remote | None = None) -> None:
        super().__init__(parent)
        self._bridge = _Bridge(self)
        self._bridge.message.connect(self._on_message, Qt.ConnectionType.QueuedConnection)
        # remote: the kernel runs on that machine, over ssh (client/ssh_kernel.py); its pid
        # is that machine's, never one of this computer's processes
        self.remote = remote
        self._client = KernelClient(self._deliver, remote=remote)
        self._requests: dict[int, tuple[str, Any]] = {}  # id -> (kind, action or request)
        self._actions_pending = 0
        self._stopped = False
        self._loading = False
        self.load_status: LoadStatus | None = None
        self.device_options: list[DeviceOption] = []
        self.kernel_pid: int | None = None
        self.counters: dict[int, tuple[int, int]] = {}

    # -- state -----------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        """True while a kernel process runs."""
        return self._client.pid is not None

    @property
    def local_pid(self) -> int | None:
        """The kernel's pid when it runs on this computer (None over ssh)."""
        return self.kernel_pid if self.remote is None else None

    @property
    def busy(self) -> bool:
        """True while torch is loading or an action or call is queued or running."""
        return self._loading or bool(self._requests)

    @property
    def queue_length(self) -> int:
        """Actions submitted and not finished yet (the running one included)."""
        return self._actions_pending

    @property
    def loading(self) -> bool:
        return self._loading

    @property
    def starts(self) -> int:
        """Kernels started so far: a restart after a death or a kill is one more."""
        return self._client.starts

    # -- requests --------------------------------------------------------------------------
    def load(self) -> None:
        """Start the kernel and import torch there (a no-op once loaded, loading or stopped)."""
        if self._stopped or self.load_status is not None or self._loading:
            return
        was_busy = self.busy
        self._loading = True
        self.loadingStarted.emit()
        self._send("load", None)
        if not was_busy:
            self.busyChanged.emit(True)

    def submit(self, action: Action) -> int:
        """Queue ``action``; returns its ticket (-1 when stopped). The Outcome comes later."""
        if self._stopped:
            return -1
        self.load()
        was_busy = self.busy
        ticket = self._send("run", action)
        self._actions_pending += 1
        self.queueLengthChanged.emit(self._actions_pending)
        if not was_busy:
            self.busyChanged.emit(True)
        return ticket

    def call(self, kind: str, payload: Any = None) -> int:
        """Send kernel request ``kind`` after what is queued; its answer by ``callFinished``."""
        if self._stopped:
            return -1
        self.load()
        was_busy = self.busy
        ticket = self._send("call", (kind, payload))
        if not was_busy:
            self.busyChanged.emit(True)
        return ticket

    def run_lesson_step(self, steps: Sequence[LessonStep], number: int,
                        snapshot: Snapshot | None) -> int:
        """Play step ``number`` of ``steps`` in the kernel; its StepResult by ``callFinished``."""
        return self.call("lesson", (tuple(steps), number, snapshot))

    def interrupt(self) -> Interrupted:
        """Stop the running code: ``idle``, ``signalled``, ``killed`` or ``restarted`` (it
        was still starting; see KernelClient)."""
        return self._client.interrupt()

    def stop(self, timeout_s: float = 1.0) -> bool:
        """Shut the kernel down (a kill after ``timeout_s``); nothing is left running."""
        if not self._stopped:
            self._stopped = True
            self._client.shutdown(timeout_s=min(timeout_s, 2.0))
            if self.kernel_pid is not None:
                self._mark_own([])
            if self.local_pid is not None:
                remove_folders_of(self.local_pid)  # the lesson's files (checkpoint_path.py)
            was_busy = self.busy
            self._requests.clear()
            self._actions_pending = 0
            self._loading = False
            if was_busy:
                self.queueLengthChanged.emit(0)
                self.busyChanged.emit(False)
        return not self.running

    # -- internals -------------------------------------------------------------------------
    def _mark_own(self, pids: list[int]) -> None:
        """The kernel's process counts as "this process": here, or on its machine."""
        if self.remote is None:
            set_own_children(pids)
        else:
            remote_kernels[self.remote.host] = frozenset(pids)

    def _send(self, kind: str, what: Any) -> int:
        if kind == "run":
            rid = self._client.request("run", what)
        elif kind == "call":
            rid = self._client.request(*what)
        else:
            rid = self._client.request(kind, what)
        if rid >= 0:
            self._requests[rid] = (kind, what)
        return rid

    def _deliver(self, message: Message) -> None:
        """Reader thread: hand the message to the GUI thread (nothing once torn down)."""
        try:
            self._bridge.message.emit(message)
        except RuntimeError:  # the bridge was deleted with the window
            pass

    @Slot(object)
    def _on_message(self, message: Message) -> None:
        if self._stopped:
            return
        kind, data = message.kind, message.data
        if kind == "hello":
            self.kernel_pid = int(data)
            self._mark_own([self.kernel_pid])  # NVML's "this process" line follows the kernel
            self.kernelStarted.emit(self.kernel_pid)
        elif kind == "workspace":
            self.workspaceChanged.emit(data)
        elif kind == "counters":
            self.counters = dict(data)
            self.countersChanged.emit(self.counters)
        elif kind == "outcome":  # a lesson step's action: on the graphs as the playground's
            self.outcomeReady.emit(data)
        elif kind in ("died", "restarted"):
            self._on_ended(data)
        elif message.id is None:
            pass  # an internal error outside a request: the client logged it (kernel_client.py)
        elif message.id in self._requests:
            self._answer(message.id, kind, data)

    def _answer(self, rid: int, kind: str, data: Any) -> None:
        was_busy = self.busy
        request, what = self._requests.pop(rid)
        if request == "load":
            self._loading = False
            status = data if kind == "reply" else LoadStatus(False, load_failed_text(kind))
            if self.remote is not None and status.torch_missing:
                status = replace(status, message=tr(
                    "PyTorch is not installed on {host}, where the playground's code runs: "
                    "install it there (pip install 'gpumon[playground]'). The Monitor goes on.",
                    host=for_terminal(self.remote.host)))
            self.load_status = status
            self.loadingFinished.emit(status)
            if kind == "reply" and status.ok:
                self._send("devices", None)
        elif request == "devices":
            if kind == "reply":
                self.device_options = list(data)
                self.devicesChanged.emit(self.device_options)
        elif request == "run":
            if kind == "reply":
                outcome = data
            else:  # an internal error was logged by the client (kernel_client.py)
                error = internal_error(data) if kind == "internal_error" else \
                    refused_error(data) if kind == "refused" else interrupted_error()
                outcome = Outcome(what, what.code(), False, time.time(), 0.0, error=error)
            self._finish_action(rid, outcome)
        else:
            result: object = data
            if kind == "interrupted":
                result = KernelInterrupted(tr("Stopped by the Stop button."))
            elif kind == "internal_error":
                result = KernelInternalError(data)  # logged by the client (kernel_client.py)
            elif kind == "refused":
                result = KernelRefused(data)
            self.callFinished.emit(rid, result)
        if was_busy and not self.busy:
            self.busyChanged.emit(False)

    def _finish_action(self, rid: int, outcome: Outcome) -> None:
        self._actions_pending = max(0, self._actions_pending - 1)
        self.outcomeReady.emit(outcome)
        self.actionFinished.emit(rid, outcome)
        self.queueLengthChanged.emit(self._actions_pending)

    def _on_ended(self, ended: KernelExit) -> None:
        """The kernel is gone: every request it owed fails, the next one starts a fresh one."""
        self.kernel_pid = None
        self._mark_own([])
        if self.remote is None:
            remove_folders_of(ended.pid)  # the lesson's files went with it (checkpoint_path.py)
        self.counters = {}
        # A kernel that died under an action (os._exit(3), a segfault): that action's card
        # says so, and a card of the kernel's own beside it said it twice.
        on_a_card = ended.reason == "died" and any(
            self._requests.get(rid, ("",))[0] == "run" for rid in ended.lost_requests)
        self.kernelEnded.emit(ended, on_a_card)
        was_busy = self.busy
        for rid in ended.lost_requests:
            if rid not in self._requests:
                continue
            request, what = self._requests.pop(rid)
            if request == "load":
                self._loading = False
                self.loadingLost.emit(ended)
            elif request == "run":
                self._finish_action(rid, Outcome(what, what.code(), False, time.time(), 0.0,
                                                 error=lost_error(ended)))
            elif request == "call":
                self.callFinished.emit(rid, KernelLost(ended.sentence()))
        self.workspaceChanged.emit(WorkspacePage())
        self.countersChanged.emit({})
        if was_busy and not self.busy:
            self.busyChanged.emit(False)
        if ended.reason == "killed during start-up" and self.load_status is None:
            self.load()  # warm the fresh kernel again, as the window did at start
