"""The playground kernel: a child process that owns torch, the workspace and CUDA contexts.

Run as ``python -m gpumon.playground.kernel.main`` by
:class:`~gpumon.playground.client.kernel_client.KernelClient`, it reads :class:`~wire.Request`
frames on stdin and writes :class:`~wire.Message` frames on stdout, one request at a time,
like a Jupyter kernel. The window never imports torch; a crash, an OOM kill or a runaway loop
here costs the workspace, never the window. SIGINT (CTRL_BREAK on Windows) interrupts the
running request and is ignored while idle; frames are written by one writer thread of their
own (wire.FrameWriter), which a KeyboardInterrupt never reaches, so no frame is ever cut in
half. The kernel never outlives its window (``lifeline.py``): it ends, with every process it
started, when the window's end of the pipe closes or the window's process is gone. A side thread
sends the CUDA allocator counters every ``COUNTER_PERIOD_S`` while they change, so a training
loop's memory is seen growing while it runs; until CUDA has started it looks only while a
request runs (only the user's code starts CUDA) and every ``COUNTER_IDLE_S`` besides. Each
request carries the window's language (``Request.language``): the kernel switches to it
first, so every sentence it builds (an explanation, a refusal, the lesson's words) is in the
window's language, while torch's own messages stay exactly as torch wrote them.
"""

from __future__ import annotations

import _thread
import gc
import io
import logging
import os
import queue
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Sequence
from types import FrameType
from typing import IO, Any

from gpumon import i18n
from gpumon.playground.data.errors import ErrorInfo
from gpumon.playground.data.outcome import Outcome
from gpumon.playground.data.wire import (
    FrameTooLarge,
    FrameWriter,
    Message,
    ProtocolError,
    Request,
    encode_frame,
    read_frame,
)
from gpumon.playground.kernel import lifeline
from gpumon.playground.kernel.engine import Engine
from gpumon.playground.kernel.lesson_runner import LessonRunner
from gpumon.playground.kernel.memory import torch_memory_counters
from gpumon.playground.lesson.checkpoint_path import remove_lesson_folder
from gpumon.playground.lesson.steps import LessonStep

#: How often the counters thread looks at torch's allocator (only sends when they changed).
COUNTER_PERIOD_S = 0.25
#: How often it looks while no request runs and CUDA has not started (an idle kernel's
#: thread woke four times a second for counters that cannot change).
COUNTER_IDLE_S = 5.0
#: Seconds the user's code waits for "started" to be written (the window reading it).
STARTED_WAIT_S = 1.0
#: Requests that run the user's code: only these can be interrupted.
USER_CODE = frozenset({"run", "lesson"})
#: The in-band Stop's request kind (its payload: the id of the request to stop).
INTERRUPT = "interrupt"
#: The window's beat over ssh, every second: read here, told to the watchdog.
BEAT = "beat"


class Kernel:
    """Serves requests on one Engine; every answer is a Message, never an exception."""

    def __init__(self, out: IO[bytes]) -> None:
        self.engine = Engine()
        self._writer = FrameWriter(out, "gpumon-kernel-writer")
        self.busy = False  # True while the user's code runs (SIGINT interrupts only then)
        self.importing = False  # True during ``import torch``, which must never be cut short
        self.deferred = False  # a SIGINT came during the import: raise it once torch is in
        self._lessons: dict[int, LessonRunner] = {}  # by the key the window gave the steps
        self._snapshot: Any = None
        self._request_id: int | None = None  # the request being answered
        self.request_began = threading.Event()  # wakes the counters thread
        self.answering = False  # True while any request is answered
        self._handlers: dict[str, Callable[[Any], Any]] = {
            "load": lambda _p: self.engine.ensure_loaded(),
            "devices": lambda _p: self.engine.devices(),
            "run": self._run,
            "workspace": lambda _p: self.engine.workspace(),
            "names": lambda _p: self.engine.names(),
            "lesson": self._lesson,
            "ping": lambda _p: os.getpid(),
        }

    def send(self, message: Message) -> None:
        """Queue one message for the writer thread (from any thread); encoding errors are
        the caller's."""
        self._writer.send(message)

    def drain(self, timeout_s: float = 5.0) -> bool:
        """Wait until every message queued so far is written."""
        return self._writer.drain(timeout_s)

    def close(self, timeout_s: float = 1.0) -> None:
        """Write what is queued and close the pipe."""
        self._writer.close(timeout_s)

    def send_answer(self, request: Request, result: Any) -> None:
        """The reply to ``request``; one that cannot be sent (it cannot be pickled, or is
        over the frame limit) becomes an error the window shows, and the kernel lives on."""
        try:
            frame = encode_frame(Message("reply", request.id, result))
        except Exception as exc:  # whatever pickling the user's values raises
            why = f"{type(exc).__name__}: {exc}"[:500]
            if isinstance(result, Outcome):
                error = ErrorInfo("UnsendableResult", why, i18n.tr(
                    "The result could not be sent to the window; the kernel and its "
                    "workspace are kept."), by_torch=False)
                self.send(Message("reply", request.id, Outcome(
                    result.action, result.code, False, result.started_at, result.duration_s,
                    error=error)))
            else:
                self.send(Message("internal_error", request.id,
                                  f"the answer to {request.kind!r} could not be sent: {why}"))
            return
        self._writer.send_bytes(frame)

    def serve(self, inp: IO[bytes]) -> None:
        """Answer requests until ``shutdown`` or until the window closes its end. A thread
        reads them (:meth:`read_requests`), so that an in-band interrupt is read while the
        user's code runs."""
        self.send(Message("hello", None, os.getpid()))
        requests: queue.SimpleQueue[Request | None] = queue.SimpleQueue()
        threading.Thread(target=self.read_requests, args=(inp, requests), daemon=True,
                         name="gpumon-kernel-reader").start()
        while (request := requests.get()) is not None and request.kind != "shutdown":
            self.answer(request)
        self.drain()

    def read_requests(self, inp: IO[bytes], requests: queue.SimpleQueue[Request | None],
                      ) -> None:
        """Reader thread: queue each request for the main thread, None at the end; act on
        an ``interrupt`` at once (:meth:`interrupt`)."""
        while True:
            try:
                request: Request = read_frame(inp)
            except (EOFError, OSError):
                break
            except FrameTooLarge as exc:  # the stream cannot be followed past it
                self.send(Message("internal_error", None, f"a request was refused: {exc}"))
                break
            except ProtocolError as exc:  # the frame was read whole: the next one is intact
                self.send(Message("internal_error", None, f"a request was refused: {exc}"))
                continue
            if request.kind == INTERRUPT:
                self.interrupt(request.payload)
                continue
            if request.kind == BEAT:  # over ssh, for the watchdog's relay: nothing to do here
                continue
            requests.put(request)
            if request.kind == "shutdown":
                return
        requests.put(None)

    def interrupt(self, target: object) -> bool:
        """The in-band Stop (a frame, ``KernelClient(in_band=True)``; over ssh the watchdog
        turns the window's Stop into a SIGINT instead, which also reaches a C call):
        SIGINT to the main thread, as the window's own SIGINT would be, if the request it
        names is the user's code running now; a Stop that comes late never hits the next
        request. A signal, not ``_thread.interrupt_main``: it also ends a blocking call
        (``time.sleep(100)``, a read). True if sent."""
        if not self.busy or self._request_id != target:
            return False
        if hasattr(signal, "pthread_kill"):
            signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)
        else:  # Windows: no thread-directed signal; the next bytecode is interrupted
            _thread.interrupt_main(signal.SIGINT)
        return True

    def answer(self, request: Request) -> None:
        """Run one request; torch's errors are in the Outcome, ours become internal_error."""
        handler = self._handlers.get(request.kind)
        if request.language != i18n.language():  # the window's language, for every sentence
            i18n.set_language(request.language)
        self.answering = True
        self.request_began.set()
        try:
            try:
                self.busy = request.kind in USER_CODE
                self._request_id = request.id
                if self.busy:  # from now on a SIGINT interrupts this request (kernel_client)
                    self.send(Message("started", request.id))
                    # written before the code runs: code that holds the GIL from its first
                    # line on (one long C call) kept the writer thread from sending it, and
                    # the window, which stops a request only once it has started, never did
                    self.drain(STARTED_WAIT_S)
                if handler is None:
                    raise ValueError(f"unknown kernel request {request.kind!r}")
                if request.kind in USER_CODE or request.kind == "load":
                    self._load_torch()
                result = handler(request.payload)
            finally:
                self.busy = False
                self.answering = False
        except KeyboardInterrupt:
            self.send(Message("interrupted", request.id))
            self._send_workspace()
            return
        except Exception:  # a bug of gpumon's: shown as one, with its traceback
            self.send(Message("internal_error", request.id, traceback.format_exc()))
            return
        self.send_answer(request, result)
        if request.kind in ("run", "lesson"):
            self._send_workspace()

    def _load_torch(self) -> None:
        """``import torch`` with SIGINT held back: a KeyboardInterrupt inside it leaves torch
        half-imported, and every later import then fails ("duplicate registrations"). A
        Stop that came meanwhile interrupts the user's request right after the import."""
        if self.engine.is_loaded:
            return
        self.importing = True
        try:
            self.engine.ensure_loaded()
        finally:
            self.importing = False
        if self.deferred:
            self.deferred = False
            if self.busy:
                raise KeyboardInterrupt

    def _run(self, action: Any) -> Any:
        return self.engine.run(action)

    def _lesson(self, payload: tuple[int, Sequence[LessonStep] | None, int, Any]) -> Any:
        # The window sends a lesson's steps once per kernel, with a key; later steps of it
        # carry only the key (kernel_client.py).
        key, steps, number, snapshot = payload
        self._snapshot = snapshot
        runner = self._lessons.get(key)
        if runner is None:
            if steps is None:
                raise ValueError(f"lesson {key} was never sent to this kernel")
            # The playground's own engine: the lesson's tensors are in the one workspace, in
            # the memory lines, and can be deleted there; jumping steps forgets only its names.
            runner = LessonRunner(self.engine, lambda: self._snapshot, tuple(steps),
                                  shared=True)
            self._lessons[key] = runner
        rid = self._request_id
        # Each outcome goes to the window as it happens, so a step's actions are marked on
        # the graphs when they run, exactly as the Playground's own actions are.
        runner.on_outcome = lambda outcome: self.send(Message("outcome", rid, outcome))
        return runner.run_step(number)

    def _send_workspace(self) -> None:
        try:
            entries = self.engine.workspace()
        except Exception:
            self.send(Message("internal_error", None, traceback.format_exc()))
            return
        self.send(Message("workspace", None, entries))

    def watch_counters(self, stop: threading.Event) -> None:
        """Send the allocator counters whenever they change (counters thread); ``stop``
        ends it (with ``request_began`` set, to wake it)."""
        last: dict[int, tuple[int, int]] | None = None
        counters: dict[int, tuple[int, int]] = {}
        while True:
            if counters or self.answering:  # CUDA started, or code runs that may start it
                stop.wait(COUNTER_PERIOD_S)
            else:
                self.request_began.wait(COUNTER_IDLE_S)
            self.request_began.clear()
            if stop.is_set():
                return
            counters = torch_memory_counters()  # {} until CUDA is initialised: no context made
            if counters != last:
                last = counters
                try:
                    self.send(Message("counters", None, counters))
                except (OSError, ValueError):  # the window went away
                    return


def _install_interrupt(kernel: Kernel) -> None:
    """SIGINT / SIGBREAK raise KeyboardInterrupt only while the user's code runs (after
    ``import torch`` if it comes during the import)."""

    def on_interrupt(_signum: int, _frame: FrameType | None) -> None:
        if kernel.importing:
            kernel.deferred = True
        elif kernel.busy:
            raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_interrupt)
    if hasattr(signal, "SIGBREAK"):
        signal.signal(signal.SIGBREAK, on_interrupt)


def main() -> int:
    """Take the protocol pipes off fds 0 and 1, so user code's print() and input() are safe."""
    lifeline.isolate_imports()
    lifeline.bind_to_parent()
    lifeline.start_watchdog()
    inp = os.fdopen(os.dup(0), "rb")
    out = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    # A code-line cell's print() is kept for its card (printed.py); anything else written to
    # fd 1 (a C library, a thread) goes to the kernel's stderr, never into the protocol.
    os.dup2(2, 1)
    # The window's client reports each internal error it receives (kernel_client.py); logging it
    # here too would print every bug twice on the terminal.
    internal = logging.getLogger("gpumon.internal")
    internal.addHandler(logging.NullHandler())
    internal.propagate = False
    kernel = Kernel(out)
    lifeline.before_exit.append(flush_open_files)
    lifeline.before_exit.append(remove_lesson_folder)
    lifeline.watch()
    _install_interrupt(kernel)
    stop = threading.Event()
    watcher = threading.Thread(target=kernel.watch_counters, args=(stop,),
                               name="gpumon-kernel-counters", daemon=True)
    watcher.start()
    try:
        kernel.serve(inp)
    except (BrokenPipeError, OSError):  # the window is gone: nothing to tell anyone
        pass
    finally:
        stop.set()
        kernel.request_began.set()
        kernel.close()
        lifeline.end_children()
    return 0


_WRITERS = (io.TextIOWrapper, io.BufferedWriter, io.BufferedRandom, io.FileIO)


def flush_open_files() -> int:
    """Flush every open file the user's code is still writing (``f = open(...)`` kept in the
    workspace): ``os._exit`` skips the interpreter's teardown, which would have flushed
    them. Returns how many were flushed."""
    flushed = 0
    for obj in gc.get_objects():
        # type(), not isinstance(): that reads __class__, which some lazy module attributes
        # answer with a deprecation warning.
        if issubclass(type(obj), _WRITERS) and not obj.closed:
            try:
                if obj.writable():
                    obj.flush()
                    flushed += 1
            except (OSError, ValueError):  # a broken pipe, a file closed meanwhile
                pass
    return flushed


if __name__ == "__main__":
    code = main()
    # Skip the interpreter's teardown: with torch imported it took 0.4 s when idle (measured,
    # 2-core machine; 0.01 s with os._exit), and over the window's 1 s quit budget under
    # load, so a clean shutdown ended in a kill. The protocol pipe is flushed per frame;
    # the user's own open files are flushed here.
    flush_open_files()
    remove_lesson_folder()  # os._exit skips atexit (checkpoint_path.py)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
