"""The window's side of the playground kernel: start, request, interrupt, restart, shut down.

Qt-free (the Qt wrapper is ``ui/playground/kernel_link.py``). Requests are written in order
and answered in order; every answer, and every event (the kernel died, was restarted, sent
counters), reaches ``on_message`` on the client's reader thread. Like jupyter_client's
KernelManager: an interrupt is SIGINT first and a kill plus a fresh kernel after
``grace_s``; shutdown asks politely, then kills, so quitting never leaves a kernel behind.

Nothing the kernel does can wedge the window: requests are written by a writer thread (the
caller never waits on a full pipe); the reader refuses a frame over the size limit, one that
stops half-way, and any it cannot decode, and then ends that kernel with the reason, which
the next request replaces; a kernel that closes its output while alive is ended too. Each
kernel runs in a process group of its own, which is killed when it ends, so a child of the
user's code that still holds the pipes can neither keep the reader waiting nor outlive it;
on Linux a kernel not forked from the fork server runs under its watchdog (keeper.py), which
ends what the kernel left wherever it went, and caps the kernel's memory. With ``remote``
the kernel runs on another machine over ssh (ssh_kernel.py), everything else the same: Stop
is then a mark on the connection (no signal crosses ssh) that its watchdog there turns into
a SIGINT, and a beat a second tells that watchdog the link lives.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from gpumon import i18n
from gpumon.i18n import tr
from gpumon.playground.client import forkserver, keeper
from gpumon.playground.client.forkserver import ForkedKernel
from gpumon.playground.client.internal import internal_errors_in
from gpumon.playground.client.interrupt import (
    Interrupted,
    creation_flags,
    interrupt_path,
    send_interrupt,
)
from gpumon.playground.client.job import put_in_job
from gpumon.playground.client.keeper import KeptKernel, descendants, kill_all
from gpumon.playground.client.kernel_exit import LOST_NAMES_SHOWN, KernelExit
from gpumon.playground.client.ssh_kernel import STOP, Remote, SshKernel
from gpumon.playground.data.errors import report_internal
from gpumon.playground.data.wire import (
    FOLDER_ENV,
    PARENT_ENV,
    FrameReader,
    FrameTooLarge,
    FrameWriter,
    Message,
    ProtocolError,
    Request,
)

#: Seconds between the beats sent to a kernel over ssh (kernel/watchdog.py's Silence).
BEAT_S = 1.0
#: Seconds an interrupted kernel has to stop before it is killed and restarted.
INTERRUPT_GRACE_S = 2.0
#: Requests the window makes on its own account (warming up, refreshing the table); Stop
#: stops the user's code ("run", "lesson"), never these.
HOUSEKEEPING = frozenset({"load", "devices", "workspace", "names", "ping"})
#: Seconds a kernel that closed its output (while still running) has to exit on its own.
CLOSED_OUTPUT_GRACE_S = 1.0
ROOT = Path(__file__).resolve().parents[3]  # the folder that holds gpumon/
KERNEL_MODULE = "gpumon.playground.kernel.main"


def kernel_command(python: str) -> list[str]:
    """How a kernel is started (tests put a scripted fake kernel here)."""
    return [python, "-m", KERNEL_MODULE]


def kernel_env() -> dict[str, str]:
    """A new kernel's environment: this one, with gpumon's folder first on PYTHONPATH, the
    window's pid and the user's folder (kernel/lifeline.py)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env[PARENT_ENV] = str(os.getpid())
    env[keeper.CAP_ENV] = str(keeper.memory_cap())
    try:
        env[FOLDER_ENV] = os.getcwd()
    except OSError:  # the folder was deleted under the window: the user's home instead
        env[FOLDER_ENV] = os.path.expanduser("~")
    return env


@dataclass
class _Generation:
    """One kernel process and what it owes the window."""

    proc: subprocess.Popen[bytes] | ForkedKernel | KeptKernel | SshKernel
    report: str  # the file its watchdog writes to when it ends it for its memory
    writer: FrameWriter
    pending: list[int] = field(default_factory=list)
    kinds: dict[int, str] = field(default_factory=dict)  # request id -> kind, while pending
    ready: bool = False  # the kernel said hello: its SIGINT handler is in place
    started: int | None = None  # the user request the kernel said it is running now
    stop_when_started: int | None = None  # Stop came before this request started
    names: tuple[str, ...] = ()  # the workspace as last reported (its first names)
    total: int = 0  # how many names it had
    ending: str = ""  # why the client ends it on purpose ("shutdown", "killed after interrupt")
    detail: str = ""  # why the client ended it, for "protocol"
    reader: threading.Thread | None = None
    lessons: dict[tuple[Any, ...], int] = field(default_factory=dict)  # steps sent -> key
    kernel_pid: int | None = None  # the pid its hello said (over ssh: on the other machine)


class KernelClient:
    """Owns one kernel process at a time; restarts lazily after a death."""

    def __init__(self, on_message: Callable[[Message], None],
                 python: str = sys.executable, in_band: bool = False,
                 remote: Remote | None = None) -> None:
        self._on_message = on_message
        self.python = python  # the interpreter its kernels run with (local ones)
        # Each kernel on another machine, at the far end of ssh (ssh_kernel.py)
        self.remote = remote
        # Stop without a signal from here: over ssh the mark its watchdog there turns into
        # a SIGINT (ssh_kernel.STOP); with ``in_band``, a frame the kernel's reader thread
        # acts on; else the platform's signal (interrupt.py)
        self._in_band = in_band or remote is not None
        self._lock = threading.RLock()
        self._gen: _Generation | None = None
        self._next_id = 0
        self._closed = False
        self.starts = 0  # kernels started so far (tests and the log read it)
        # Every kernel is started from this one long-lived thread: Linux sends a process's
        # parent-death signal when the *thread* that started it ends (prctl(2)), and a
        # restart may be asked for from a short-lived timer thread (_escalate).
        self._spawner = ThreadPoolExecutor(1, thread_name_prefix="gpumon-kernel-spawner")
        # where a kernel's watchdog says it ended the kernel for its memory (keeper.py)
        self._reports = ""  # made at the first start: a client that starts none leaves none

    # -- state -------------------------------------------------------------------------------
    @property
    def pid(self) -> int | None:
        """The running kernel's pid, or None."""
        gen = self._gen
        return gen.proc.pid if gen is not None and gen.proc.poll() is None else None

    @property
    def process(self) -> subprocess.Popen[bytes] | ForkedKernel | KeptKernel | SshKernel | None:
        """The latest kernel's process, running or ended (its type says how it was started:
        forked from the fork server, under its watchdog, over ssh), or None before the first."""
        gen = self._gen
        return gen.proc if gen is not None else None

    @property
    def running_request(self) -> int | None:
        """The request the running kernel said it is running now, or None."""
        gen = self._gen
        return gen.started if gen is not None else None

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
            self._reports = self._reports or keeper.report_folder()
            report = os.path.join(self._reports, f"kernel-{self.starts + 1}")
            proc = self._spawner.submit(self._spawn, report).result()
            assert proc.stdin is not None and proc.stdout is not None
            gen = _Generation(proc, report,
                              FrameWriter(proc.stdin, f"gpumon-kernel-writer-{proc.pid}"))
            self._gen = gen
            self.starts += 1
            gen.reader = threading.Thread(target=self._read, args=(gen, proc.stdout),
                                          daemon=True, name=f"gpumon-kernel-reader-{proc.pid}")
            gen.reader.start()
            if self.remote is not None:
                threading.Thread(target=self._beat, args=(gen,), daemon=True,
                                 name=f"gpumon-kernel-beat-{proc.pid}").start()
            return True

    def _spawn(self, report: str
               ) -> subprocess.Popen[bytes] | ForkedKernel | KeptKernel | SshKernel:
        """Start a kernel (on the spawner thread): in gpumon's own folder, so nothing in the
        user's folder shadows torch or gpumon (kernel/lifeline.py), in a session of its own;
        forked from the fork server where one is ready (forkserver.py), else under its
        watchdog (keeper.py) where it can be; on the other machine over ssh, where its
        watchdog is started there (ssh_kernel.py, cli/kernel.py)."""
        if self.remote is not None:
            return SshKernel.start(self.remote)
        env = kernel_env()
        env[keeper.REPORT_ENV] = report
        command = kernel_command(self.python)
        if command == [self.python, "-m", KERNEL_MODULE]:
            forked = forkserver.spawn(self.python, env)
            if forked is not None:
                return forked
        kept = keeper.spawn(command, env, str(ROOT))
        if kept is not None:
            return kept
        proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, close_fds=True,
            cwd=str(ROOT), creationflags=creation_flags(), start_new_session=os.name == "posix",
        )
        put_in_job(proc)  # Windows: ended with the window, whatever ends it (job.py)
        return proc

    def request(self, kind: str, payload: Any = None) -> int:
        """Send a request (starting a kernel if none runs); its id, or -1 once shut down.
        Returns at once: the writer thread writes it. A request over the frame limit is
        answered at once with ``refused`` (data: the sentence)."""
        with self._lock:
            if not self.start():
                return -1
            gen = self._gen
            assert gen is not None
            self._next_id += 1
            rid = self._next_id
            if kind == "lesson":
                payload = self._lesson_payload(gen, payload)
            try:
                # The kernel builds its sentences (explanations, refusals, the lesson's words)
                # in the language each request carries: the window's, whatever it was then.
                gen.writer.send(Request(rid, kind, payload, i18n.language()))
            except FrameTooLarge as exc:
                refused = Message("refused", rid, tr("The request was not sent: {why}.",
                                                     why=str(exc)))
                if kind == "lesson" and payload[1] is not None:  # its steps never arrived
                    gen.lessons.pop(tuple(payload[1]), None)
            else:
                gen.pending.append(rid)
                gen.kinds[rid] = kind
                return rid
        self._on_message(refused)
        return rid

    @staticmethod
    def _lesson_payload(gen: _Generation, payload: tuple[Any, int, Any]) -> tuple[Any, ...]:
        """A lesson's steps go to a kernel once; later requests name them by key."""
        steps, number, snapshot = payload
        steps = tuple(steps)
        key = gen.lessons.get(steps)
        if key is not None:
            return (key, None, number, snapshot)
        key = len(gen.lessons) + 1
        gen.lessons[steps] = key
        return (key, steps, number, snapshot)

    def interrupt(self, grace_s: float = INTERRUPT_GRACE_S) -> Interrupted:
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
            if interrupt_path() == "none" and not self._in_band:
                self._kill(gen, "killed after interrupt")
                return "killed"
            if gen.started == target:
                self._stop(gen, target)
            else:  # a SIGINT now would reach the kernel between requests and be ignored
                gen.stop_when_started = target
        timer = threading.Timer(grace_s, self._escalate, args=(gen, target))
        timer.daemon = True
        timer.start()
        return "signalled"

    def shutdown(self, timeout_s: float = 1.0) -> int | None:
        """Ask the kernel to exit, kill it after ``timeout_s``, reap it; its return code."""
        with self._lock:
            self._closed = True
            gen = self._gen
            if gen is None:
                return None
            gen.ending = "shutdown"
        # The writer thread sends it after what is queued; one that cannot finish in time
        # is ended by the kill below, which breaks the pipe.
        deadline = time.monotonic() + timeout_s
        try:
            gen.writer.send(Request(0, "shutdown"))
        except ProtocolError:
            pass
        gen.writer.close(0)
        try:
            code = gen.proc.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            # Busy in a long torch call: SIGKILL is the only way out in time.
            self._kill(gen, "shutdown")
            code = gen.proc.wait()
        self._end_group(gen)
        if gen.reader is not None and gen.reader is not threading.current_thread():
            gen.reader.join(1.0)
        self._spawner.shutdown(wait=False)
        if self._reports:
            shutil.rmtree(self._reports, ignore_errors=True)
        return code

    # -- internals ---------------------------------------------------------------------------
    @staticmethod
    def _beat(gen: _Generation) -> None:
        """Over ssh, a beat a second while the kernel runs: its watchdog there tells a
        silent link (a laptop asleep) from an idle window by them (cli/kernel.py)."""
        while not gen.ending and gen.proc.poll() is None:
            time.sleep(BEAT_S)
            try:
                gen.writer.send(Request(0, "beat"))
            except (ProtocolError, OSError, ValueError):
                return

    def _stop(self, gen: _Generation, target: int) -> None:
        if isinstance(gen.proc, SshKernel):  # a SIGINT from the watchdog there (ssh_kernel.py)
            gen.writer.send_bytes(STOP)
        elif not self._in_band:
            send_interrupt(gen.proc, interrupt_path())
        else:
            gen.writer.send(Request(0, "interrupt", target))

    def _escalate(self, gen: _Generation, target: int) -> None:
        with self._lock:
            if gen is not self._gen or target not in gen.pending or gen.proc.poll() is not None:
                return  # it stopped in time (or died on its own)
            self._kill(gen, "killed after interrupt")
            self.start()

    def _kill(self, gen: _Generation, why: str, detail: str = "") -> None:
        """Kill the kernel and everything it started (found before the kill, while they
        are still its descendants)."""
        gen.ending = why
        gen.detail = detail
        children = descendants(gen.proc.pid) if gen.proc.poll() is None else []
        try:
            gen.proc.kill()
        except OSError:
            pass
        kill_all(children)

    @staticmethod
    def _end_group(gen: _Generation) -> None:
        """Kill what is left of the kernel's process group (a child of the user's code)."""
        if os.name != "posix" or gen.proc.poll() is None:
            return
        try:
            os.killpg(gen.proc.pid, signal.SIGKILL)
        except OSError:  # ProcessLookupError: nothing left, PermissionError: not ours
            pass

    def _read(self, gen: _Generation, stdout: IO[bytes]) -> None:
        """Reader thread: deliver each message; when the stream ends or breaks, make sure
        the kernel has ended and report how."""
        reader = FrameReader(stdout, alive=lambda: gen.proc.poll() is None, pid=gen.proc.pid)
        try:
            while True:
                try:
                    message: Message = reader.read()
                except (EOFError, OSError):
                    break
                except ProtocolError as exc:  # it cannot be followed any more: end it
                    with self._lock:
                        if not gen.ending:
                            self._kill(gen, "protocol", str(exc))
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
                        gen.kernel_pid = message.data if isinstance(message.data, int) else None
                    if message.kind == "started":
                        gen.started = message.id
                        if message.id is not None and gen.stop_when_started == message.id:
                            gen.stop_when_started = None
                            self._stop(gen, message.id)
                        continue  # the client's own business: not delivered
                    if message.kind == "workspace":
                        gen.names = tuple(e.name for e in message.data)[:LOST_NAMES_SHOWN]
                        gen.total = getattr(message.data, "total", len(message.data))
                self._on_message(message)
        finally:
            reader.close()  # its pidfd
        try:
            code = gen.proc.wait(CLOSED_OUTPUT_GRACE_S)
        except subprocess.TimeoutExpired:  # it closed its output but runs on: end it
            with self._lock:
                if not gen.ending:
                    self._kill(gen, "closed its output")
            code = gen.proc.wait()
        self._end_group(gen)
        stdout.close()
        remote = gen.proc if isinstance(gen.proc, SshKernel) else None
        memory = remote.ran_out() if remote else keeper.ran_out(gen.report)
        problem = remote.problem() if remote and memory is None else None
        with self._lock:
            ending = gen.ending
            lost = KernelExit(gen.kernel_pid or gen.proc.pid, code, gen.names, tuple(gen.pending),
                              ending or "died", gen.detail, gen.total, memory,
                              getattr(gen.proc, "watchdog_lost", False),
                              problem if problem and ending in ("", "protocol") else "")
            gen.pending.clear()
        gen.writer.close(0)
        if ending == "shutdown":
            return
        died = not ending or ending in ("protocol", "closed its output")
        self._on_message(Message("died" if died else "restarted", None, lost))
