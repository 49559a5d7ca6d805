"""The window's side of the playground kernel: start, request, interrupt, restart, shut down.

Qt-free (the Qt wrapper is ``ui/playground/kernel_link.py``). Requests are written in order
and answered in order; every answer, and every event (the kernel died, was restarted, sent
counters), reaches ``on_message`` on the client's reader thread. Like jupyter_client's
KernelManager: an interrupt is SIGINT first and a kill plus a fresh kernel after
``grace_s``; shutdown asks politely, then kills, so quitting never leaves a kernel behind.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from gpumon import i18n
from gpumon.i18n import tr
from gpumon.playground.client.internal import internal_errors_in
from gpumon.playground.client.interrupt import creation_flags, interrupt_path, send_interrupt
from gpumon.playground.data.errors import report_internal
from gpumon.playground.data.wire import ForbiddenGlobal, Message, Request, read_frame, write_frame

#: Seconds an interrupted kernel has to stop before it is killed and restarted.
INTERRUPT_GRACE_S = 2.0
#: Requests the window makes on its own account (warming up, refreshing the table); Stop
#: stops the user's code ("run", "lesson"), never these.
HOUSEKEEPING = frozenset({"load", "devices", "workspace", "names", "ping"})


@dataclass(frozen=True)
class KernelExit:
    """How a kernel ended and what went with it, for the card in the log."""

    pid: int
    returncode: int | None  # negative: killed by that signal (POSIX)
    lost_names: tuple[str, ...] = ()  # the workspace as last reported
    lost_requests: tuple[int, ...] = ()  # request ids that never got their answer
    reason: str = "died"  # "died", "killed after interrupt", "killed during start-up",
    # "restarted"

    def signal_name(self) -> str | None:
        """``SIGKILL`` when a signal ended it (POSIX), else None."""
        code = self.returncode
        if code is None or code >= 0:
            return None
        try:
            return signal.Signals(-code).name
        except ValueError:
            return f"signal {-code}"

    def how(self) -> str:
        """``killed by SIGKILL`` / ``exited with code 3``: the cause in a person's words (in
        the chosen language), to follow "was" in a sentence."""
        name = self.signal_name()
        if name is not None:
            return tr("killed by {signal}", signal=name)
        if self.returncode is None:
            return tr("ended")
        return tr("exited with code {code}", code=self.returncode)

    def sentence(self) -> str:
        """``The playground kernel (pid 12) was killed by SIGKILL.``"""
        name = self.signal_name()
        if name is not None:
            return tr("The playground kernel (pid {pid}) was killed by {signal}.",
                      pid=self.pid, signal=name)
        if self.returncode is None:
            return tr("The playground kernel (pid {pid}) ended.", pid=self.pid)
        return tr("The playground kernel (pid {pid}) exited with code {code}.",
                  pid=self.pid, code=self.returncode)

    def lost_text(self) -> str:
        """``the workspace (x, y) is gone`` or ``the workspace was empty``."""
        if not self.lost_names:
            return tr("The workspace was empty, so nothing was lost.")
        return tr("The workspace ({names}) is gone.", names=", ".join(self.lost_names))


@dataclass
class _Generation:
    """One kernel process and what it owes the window."""

    proc: subprocess.Popen[bytes]
    stdin: IO[bytes]
    pending: list[int] = field(default_factory=list)
    kinds: dict[int, str] = field(default_factory=dict)  # request id -> kind, while pending
    ready: bool = False  # the kernel said hello: its SIGINT handler is in place
    started: int | None = None  # the user request the kernel said it is running now
    stop_when_started: int | None = None  # Stop came before this request started
    names: tuple[str, ...] = ()  # the workspace as last reported
    ending: str = ""  # why the client ends it on purpose ("shutdown", "killed after interrupt")
    reader: threading.Thread | None = None
    # Held while a request is written to the kernel's stdin, never the client's own lock: a
    # write can wait on a full pipe while the kernel waits for the reader to drain its answers,
    # and the reader takes the client's lock for each one.
    write_lock: threading.Lock = field(default_factory=threading.Lock)


class KernelClient:
    """Owns one kernel process at a time; restarts lazily after a death."""

    def __init__(self, on_message: Callable[[Message], None],
                 python: str = sys.executable) -> None:
        self._on_message = on_message
        self._python = python
        self._lock = threading.RLock()
        self._gen: _Generation | None = None
        self._next_id = 0
        self._closed = False
        self.starts = 0  # kernels started so far (tests and the log read it)

    # -- state -------------------------------------------------------------------------------
    @property
    def pid(self) -> int | None:
        """The running kernel's pid, or None."""
        gen = self._gen
        return gen.proc.pid if gen is not None and gen.proc.poll() is None else None

    @property
    def pending(self) -> tuple[int, ...]:
        """Request ids sent and not answered yet, oldest first."""
        gen = self._gen
        return tuple(gen.pending) if gen is not None else ()

    # -- requests ----------------------------------------------------------------------------
    def start(self) -> bool:
        """Start a kernel unless one runs; False once shut down."""
        with self._lock:
            if self._closed:
                return False
            if self._gen is not None and self._gen.ending == "" and self._gen.proc.poll() is None:
                return True
            env = dict(os.environ)
            root = str(Path(__file__).resolve().parents[3])  # the folder that holds gpumon/
            env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
            proc = subprocess.Popen(  # noqa: S603 - our own interpreter and module
                [self._python, "-m", "gpumon.playground.kernel.main"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, close_fds=True,
                creationflags=creation_flags(),
            )
            assert proc.stdin is not None and proc.stdout is not None
            gen = _Generation(proc, proc.stdin)
            self._gen = gen
            self.starts += 1
            gen.reader = threading.Thread(target=self._read, args=(gen, proc.stdout),
                                          daemon=True, name=f"gpumon-kernel-reader-{proc.pid}")
            gen.reader.start()
            return True

    def request(self, kind: str, payload: Any = None) -> int:
        """Send a request (starting a kernel if none runs); its id, or -1 once shut down."""
        with self._lock:
            if not self.start():
                return -1
            gen = self._gen
            assert gen is not None
            self._next_id += 1
            rid = self._next_id
            gen.pending.append(rid)
            gen.kinds[rid] = kind
            gen.write_lock.acquire()  # taken in id order, so requests reach the kernel in order
        try:
            # The kernel builds its sentences (explanations, refusals, the lesson's words) in
            # the language each request carries: the window's, whatever it was at start-up.
            write_frame(gen.stdin, Request(rid, kind, payload, i18n.language()))
        except (BrokenPipeError, OSError, ValueError):
            pass  # the kernel is dying: the reader reports it, with this request as lost
        finally:
            gen.write_lock.release()
        return rid

    def interrupt(self, grace_s: float = INTERRUPT_GRACE_S) -> str:
        """Stop the user's running (or queued) code: ``"idle"`` (none), ``"signalled"``
        (SIGINT; a kill and a fresh kernel follow after ``grace_s`` if it still runs),
        ``"killed"`` (no gentle way on this platform), or ``"restarted"``: the kernel was
        still starting or importing torch, which a SIGINT would leave half-imported (every
        later ``import torch`` then fails), so it was killed and a fresh one started."""
        with self._lock:
            gen = self._gen
            if gen is None or gen.proc.poll() is not None:
                return "idle"
            users = [rid for rid in gen.pending if gen.kinds.get(rid) not in HOUSEKEEPING]
            if not users:
                return "idle"
            target = users[0]
            ahead = [gen.kinds.get(rid) for rid in gen.pending[:gen.pending.index(target)]]
            if not gen.ready or "load" in ahead:
                self._kill(gen, "killed during start-up")
                self.start()
                return "restarted"
            if interrupt_path() == "none":
                self._kill(gen, "killed after interrupt")
                return "killed"
            if gen.started == target:
                send_interrupt(gen.proc, interrupt_path())
            else:  # a SIGINT now would reach the kernel between requests and be ignored
                gen.stop_when_started = target
        timer = threading.Timer(grace_s, self._escalate, args=(gen, target))
        timer.daemon = True
        timer.start()
        return "signalled"

    def restart(self) -> None:
        """Kill the kernel (its workspace is lost) and start a fresh one."""
        with self._lock:
            gen = self._gen
            if gen is not None:
                self._kill(gen, "restarted")
            self.start()

    def shutdown(self, timeout_s: float = 1.0) -> int | None:
        """Ask the kernel to exit, kill it after ``timeout_s``, reap it; its return code."""
        with self._lock:
            self._closed = True
            gen = self._gen
            if gen is None:
                return None
            gen.ending = "shutdown"
        # Outside the client's lock (see write_lock); a write that cannot finish in time is
        # ended by the kill below, which breaks the pipe.
        closer = threading.Thread(target=self._send_shutdown, args=(gen,), daemon=True,
                                  name="gpumon-kernel-shutdown")
        deadline = time.monotonic() + timeout_s
        closer.start()
        closer.join(timeout_s)
        try:
            code = gen.proc.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            gen.proc.kill()  # busy in a long torch call: SIGKILL is the only way out in time
            code = gen.proc.wait()
        if gen.reader is not None and gen.reader is not threading.current_thread():
            gen.reader.join(1.0)
        return code

    # -- internals ---------------------------------------------------------------------------
    @staticmethod
    def _send_shutdown(gen: _Generation) -> None:
        with gen.write_lock:
            try:
                write_frame(gen.stdin, Request(0, "shutdown"))
                gen.stdin.close()
            except (BrokenPipeError, OSError, ValueError):
                pass

    def _escalate(self, gen: _Generation, target: int) -> None:
        with self._lock:
            if gen is not self._gen or target not in gen.pending or gen.proc.poll() is not None:
                return  # it stopped in time (or died on its own)
            self._kill(gen, "killed after interrupt")
            self.start()

    def _kill(self, gen: _Generation, why: str) -> None:
        gen.ending = why
        try:
            gen.proc.kill()
        except OSError:
            pass

    def _read(self, gen: _Generation, stdout: IO[bytes]) -> None:
        """Reader thread: deliver each message; on EOF, report how the kernel ended."""
        while True:
            try:
                message: Message = read_frame(stdout, forbidden=("torch",))
            except ForbiddenGlobal as exc:  # a bug of ours: the oldest request gets the blame
                with self._lock:
                    rid = gen.pending.pop(0) if gen.pending else None
                message = Message("internal_error", rid, f"{type(exc).__name__}: {exc}")
            except (EOFError, OSError, ValueError):
                break
            except Exception:  # noqa: BLE001 - a torn frame: the kernel is going down
                break
            if message.kind == "internal_error":
                report_internal(str(message.data))
            elif message.kind == "reply":
                for trace in internal_errors_in(message.data):
                    report_internal(trace)
            with self._lock:
                if message.kind in ("reply", "interrupted", "internal_error") and \
                        message.id in gen.pending:
                    gen.pending.remove(message.id)
                    gen.kinds.pop(message.id, None)
                if message.kind == "hello":
                    gen.ready = True
                if message.kind == "started":
                    gen.started = message.id
                    if gen.stop_when_started == message.id:
                        gen.stop_when_started = None
                        send_interrupt(gen.proc, interrupt_path())
                    continue  # the client's own business: not delivered
                if message.kind == "workspace":
                    gen.names = tuple(e.name for e in message.data)
            self._on_message(message)
        code = gen.proc.wait()
        stdout.close()
        with self._lock:
            ending = gen.ending
            lost = KernelExit(gen.proc.pid, code, gen.names, tuple(gen.pending), ending or "died")
            gen.pending.clear()
            try:
                gen.stdin.close()
            except OSError:
                pass
        if ending == "shutdown":
            return
        self._on_message(Message("died" if not ending else "restarted", None, lost))
