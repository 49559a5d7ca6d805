"""The window's side of the kernels' fork server (Linux only): kernels forked from a process
that has imported torch already, so a restart costs milliseconds, not an ``import torch``.

The first kernel of a window starts as it always did (``python -m
gpumon.playground.kernel.main``); the second does too, and starts the fork server beside it
(``kernel/forkserver.py`` says what it is); from then on, once the server says it is ready,
each new kernel is forked from it. A monitor that never restarts its kernel never pays for
the server. :func:`spawn` returns None whenever a kernel should start the ordinary way: not
Linux, the server not ready yet, started for another environment (a changed environment
starts a new server), or gone.

A :class:`ForkedKernel` stands for the kernel where the client holds a ``subprocess.Popen``:
``pid``, ``stdin``, ``stdout``, ``poll()``, ``wait()``, ``send_signal()``, ``kill()``. Its
exit status comes from the server, which is its parent.

The server is started from one long-lived thread of this module: Linux sends the parent-death
signal when the *thread* that started a process ends (prctl(2)).
"""

from __future__ import annotations

import atexit
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any

from gpumon.playground.client import keeper
from gpumon.playground.data.wire import FOLDER_ENV, PARENT_ENV

#: As in kernel/forkserver.py (the window imports nothing of the kernel's side).
SOCKET_ENV = "GPUMON_FORKSERVER_FD"
#: Set to "0" to start every kernel the ordinary way.
ENABLE_ENV = "GPUMON_KERNEL_FORKSERVER"
#: Seconds the server has to answer a fork request (a fork takes milliseconds) before the
#: kernel starts the ordinary way and the server is retired: the caller may be the GUI thread.
FORK_TIMEOUT_S = 1.0
ROOT = Path(__file__).resolve().parents[3]  # the folder that holds gpumon/
MODULE = "gpumon.playground.kernel.forkserver"

_lock = threading.Lock()
_server: ForkServer | None = None
_plain: tuple[object, int] = (None, 0)  # (key, ordinary starts in a row for that key)
_refused: set[object] = set()  # keys whose server ended before it was ready
_starter = ThreadPoolExecutor(1, thread_name_prefix="gpumon-forkserver-starter")


#: Variables that differ from one kernel to the next without bearing on what the server
#: imported: a forked kernel still gets them as sent (pytest names the running test in one).
PER_KERNEL = frozenset({FOLDER_ENV, PARENT_ENV, ENABLE_ENV, "PYTEST_CURRENT_TEST",
                        *keeper.KERNEL_SETTINGS})


def _key(python: str, env: dict[str, str]) -> tuple[str, tuple[tuple[str, str], ...]]:
    """What a server is good for: one interpreter and one environment, in which it imported
    torch; a kernel for another environment needs another server."""
    return python, tuple(sorted((k, v) for k, v in env.items() if k not in PER_KERNEL))


class ForkedKernel:
    """A kernel forked by the server, with the part of ``subprocess.Popen`` the client uses."""

    def __init__(self, pid: int, stdin: IO[bytes], stdout: IO[bytes]) -> None:
        self.pid = pid
        self.args = [MODULE, str(pid)]
        self.stdin: IO[bytes] | None = stdin
        self.stdout: IO[bytes] | None = stdout
        self.returncode: int | None = None
        self._ended = threading.Event()

    def _set_exit(self, code: int) -> None:
        if self.returncode is None:
            self.returncode = code
        self._ended.set()

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if not self._ended.wait(timeout):
            raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
        assert self.returncode is not None
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                pass

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class ForkServer:
    """One fork server process and the thread that reads what it says."""

    def __init__(self, python: str, env: dict[str, str]) -> None:
        self.key = _key(python, env)
        self.ready = threading.Event()
        self.gone = threading.Event()
        self._lock = threading.Lock()
        self._next_id = 0
        self._replies: dict[int, dict[str, Any]] = {}
        self._replied = threading.Condition(self._lock)
        self._kernels: dict[int, ForkedKernel] = {}
        self._retired = False  # replaced: it forks no more and ends with its last kernel
        self._early_exits: dict[int, int] = {}  # exits that came before the fork's reply
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._sock = ours
        server_env = {k: v for k, v in env.items() if k != FOLDER_ENV}
        server_env[PARENT_ENV] = str(os.getpid())
        server_env[SOCKET_ENV] = str(theirs.fileno())
        try:
            self.proc = subprocess.Popen(  # our own interpreter and module
                [python, "-m", MODULE], stdin=subprocess.DEVNULL, env=server_env,
                cwd=str(ROOT), close_fds=True, pass_fds=(theirs.fileno(),),
                start_new_session=True)
        finally:
            theirs.close()
        self._reader = threading.Thread(target=self._read, daemon=True,
                                        name="gpumon-forkserver-reader")
        self._reader.start()

    def wait_ready(self, timeout_s: float) -> bool:
        """Wait until it is ready (True), or has ended or ``timeout_s`` passed (False)."""
        end = time.monotonic() + timeout_s
        while not self.ready.wait(0.05):
            if self.gone.is_set() or time.monotonic() > end:
                return False
        return True

    def _read(self) -> None:
        while True:
            try:
                data = self._sock.recv(65536)
            except OSError:
                data = b""
            if not data:
                break
            try:
                message = json.loads(data)
                if not isinstance(message, dict):
                    raise ValueError(message)
                if "exit" in message:
                    pid, code = int(message["exit"]), int(message["code"])
            except (ValueError, TypeError, KeyError):
                break  # not what our server says: stop using it (its kernels are ended)
            if message.get("ready"):
                self.ready.set()
            elif "exit" in message:
                with self._lock:
                    kernel = self._kernels.pop(pid, None)
                    if kernel is None:
                        self._early_exits[pid] = code
                    done = self._retired and not self._kernels
                if kernel is not None:
                    kernel._set_exit(code)  # its owner
                if done:
                    break  # retired, and its last kernel has ended
            elif "id" in message:
                with self._lock:
                    if isinstance(message["id"], int):
                        self._replies[message["id"]] = message
                    self._replied.notify_all()
        self._ended()

    def _ended(self) -> None:
        """The server is gone: its kernels got its parent-death signal; make sure of it."""
        self.gone.set()
        self._sock.close()
        with self._lock:
            kernels, self._kernels = list(self._kernels.values()), {}
            self._replied.notify_all()
        for kernel in kernels:
            kernel.kill()
            kernel._set_exit(-signal.SIGKILL)  # its owner
        try:
            self.proc.wait(1.0)
        except subprocess.TimeoutExpired:
            self.proc.kill()

    def fork(self, env: dict[str, str]) -> ForkedKernel | None:
        """A new kernel with ``env``, or None if the server could not make one."""
        if self._retired:
            return None
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        try:
            with self._lock:
                ident = self._next_id
                self._next_id += 1
            payload = json.dumps({"id": ident, "env": env}).encode()
            try:
                # fd 2, as an ordinary kernel inherits it
                socket.send_fds(self._sock, [payload], [in_r, out_w, 2])
            except OSError:
                return None
            with self._lock:
                answered = self._replied.wait_for(
                    lambda: ident in self._replies or self.gone.is_set(), FORK_TIMEOUT_S)
            if not answered:  # stopped or stuck: never wait on it again
                self.retire()
                return None
            with self._lock:
                reply = self._replies.pop(ident, None)
                if reply is None or "pid" not in reply:
                    return None
                pid = int(reply["pid"])
                kernel = ForkedKernel(pid, os.fdopen(in_w, "wb"), os.fdopen(out_r, "rb"))
                in_w = out_r = -1
                code = self._early_exits.pop(pid, None)
                if code is None:
                    self._kernels[pid] = kernel
            if code is not None:
                kernel._set_exit(code)  # its owner
            return kernel
        finally:
            for fd in (in_r, out_w, in_w, out_r):
                if fd >= 0:
                    os.close(fd)

    def retire(self) -> None:
        """Fork no more; end once the kernels it forked have ended (at once if none runs), so
        a kernel in use never ends because another server replaced this one."""
        with self._lock:
            self._retired = True
            idle = not self._kernels
        if idle:
            _starter.submit(self.close)

    def close(self) -> None:
        """End the server (and so any kernel it still has)."""
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._sock.close()
        try:
            self.proc.wait(2.0)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def enabled() -> bool:
    return sys.platform.startswith("linux") and os.environ.get(ENABLE_ENV, "1") != "0"


def spawn(python: str, env: dict[str, str]) -> ForkedKernel | None:
    """A kernel forked from the server for ``python`` and ``env``; None: start it the ordinary
    way. The second ordinary start in a row for one environment starts a server for it
    (replacing a server of another environment), for the kernels after it."""
    global _server, _plain
    if not enabled():
        return None
    key = _key(python, env)
    with _lock:
        server = _server
        if server is not None and server.gone.is_set():
            if not server.ready.is_set():
                _refused.add(server.key)  # it ended before it could serve: not again
            _server = server = None
        if key in _refused:
            return None
        if server is not None and server.key == key:
            if server.ready.is_set():
                kernel = server.fork(env)
                if kernel is not None:
                    return kernel
            else:
                return None  # still importing torch: this one starts the ordinary way
        count = _plain[1] + 1 if _plain[0] == key else 1
        _plain = (key, count)
        if count >= 2:
            if server is not None:
                server.retire()
            _server = _starter.submit(ForkServer, python, env).result()
        return None


def start_server(python: str, env: dict[str, str]) -> ForkServer:
    """A server for ``python`` and ``env`` now: the running one if it is for them, else a new
    one replacing it; it is ready when ``ready`` is set. The window never calls it (``spawn``
    starts a server at its second kernel); the test suite and the kernel benchmark do, so
    that each test process imports torch once, while it collects, and forks every kernel."""
    global _server
    with _lock:
        if (_server is not None and _server.key == _key(python, env)
                and not _server.gone.is_set()):
            return _server
        old, _server = _server, None
        if old is not None:
            old.retire()
        server = _server = _starter.submit(ForkServer, python, env).result()
    return server


def current() -> ForkServer | None:
    """The server kernels are forked from now (ready or not), if any."""
    return _server


def shutdown() -> None:
    """End the server, if one runs (at exit, and for tests)."""
    global _server
    with _lock:
        server, _server = _server, None
    if server is not None:
        server.close()


atexit.register(shutdown)
