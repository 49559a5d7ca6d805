"""The kernels' fork server (Linux): a process that has imported torch once and forks each
new kernel from itself, so a restart costs a fork (milliseconds) instead of ``import torch``
(seconds of CPU).

Run as ``python -m gpumon.playground.kernel.forkserver`` by the window's side
(``client/forkserver.py``), in gpumon's own folder and in a session of its own, with one end
of a ``SOCK_SEQPACKET`` socket pair as the fd named by :data:`SOCKET_ENV`. It imports torch
(never initialising CUDA, which would not survive a fork), says ``ready``, then answers
each request, a JSON object ``{"id": n, "env": {...}}`` carrying the new kernel's stdin,
stdout and stderr as three file descriptors, with ``{"id": n, "pid": p}``; and it reports
each kernel's end as ``{"exit": p, "code": c}`` (``Popen.returncode``'s convention: minus
the signal's number for a kernel ended by a signal).

A forked kernel is the kernel ``python -m gpumon.playground.kernel.main`` would be: a
session of its own, the environment the window sent, gpumon's folder first on ``sys.path``
and the user's folder last (``lifeline.isolate_imports``), fresh random seeds. Its parent is
this server, which it watches as it would watch the window (``lifeline``); the server
watches the window the same way, so whatever ends the window ends the server, and that ends
every kernel. When the window closes its end of the socket the server ends its kernels and
exits.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import sys
import traceback
from typing import Any

from gpumon.playground.data.wire import PARENT_ENV
from gpumon.playground.kernel import lifeline, watchdog

#: The environment variable holding the socket's file descriptor number.
SOCKET_ENV = "GPUMON_FORKSERVER_FD"
#: The largest request (a JSON environment) the server reads.
MAX_REQUEST_BYTES = 1 << 20


def preload() -> None:
    """What every kernel would import first: torch (when it can be imported) and the kernel."""
    import gpumon.playground.kernel.main  # noqa: F401 - imported for the forks

    try:
        import torch
        import torch.nn
    except Exception:  # each kernel then reports it as it would unforked
        return
    if torch.version.cuda is not None or torch.version.hip is not None:
        return  # a GPU build: only what a plain ``import torch`` does, known to fork safely
    try:
        # torch imports it at a kernel's first operation on the meta device (the lesson has
        # several): over a second of CPU that every forked kernel would pay again.
        import torch._dynamo
    except Exception:  # then a kernel imports it when it needs it, as before
        pass


def cuda_untouched() -> bool:
    """False if CUDA was initialised here: a forked child could not use it."""
    torch = sys.modules.get("torch")
    try:
        return torch is None or not torch.cuda.is_initialized()
    except Exception:  # a torch without that call cannot have done it
        return True


def _send(sock: socket.socket, message: dict[str, Any]) -> None:
    try:
        sock.send(json.dumps(message).encode())
    except OSError:  # the window is gone: the loop sees the end next
        pass


def _reap(sock: socket.socket, children: set[int]) -> None:
    """Reap what ended, report the kernels' ends, and sweep what an ended kernel left."""
    ended = False
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            children.clear()
            break
        if pid == 0:
            break
        if pid in children:  # else one of the orphans swept below
            children.discard(pid)
            ended = True
            _send(sock, {"exit": pid, "code": os.waitstatus_to_exitcode(status)})
    if ended:
        sweep_orphans(children)


def sweep_orphans(kernels: set[int]) -> None:
    """SIGKILL every child of this server that is not a running kernel, and what is below
    it. The server is a child subreaper (``lifeline.bind_to_parent``), so what a kernel
    started and left behind (a daemon, forked twice in a session of its own) is re-parented
    here when the kernel ends, however it ended."""
    me = os.getpid()
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) not in kernels and watchdog.parent_of(int(name)) == me:
            watchdog.end_kernel(int(name), None)


def _run_kernel(env: dict[str, str], fds: list[int], server_pid: int,
                closing: list[int]) -> None:
    """In the forked child: become the kernel; never returns."""
    code = 1
    try:
        os.setsid()
        signal.set_wakeup_fd(-1)
        for sig in (signal.SIGCHLD, signal.SIGTERM):
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in [*fds, *closing]:
            os.close(fd)
        os.environ.clear()
        os.environ.update(env)
        os.environ[PARENT_ENV] = str(server_pid)
        _reseed()
        from gpumon.playground.kernel import main as kernel_main

        sys.argv = [kernel_main.__file__]
        code = kernel_main.main()
        kernel_main.flush_open_files()
        kernel_main.remove_lesson_folder()
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:  # a forked child must never return into the loop
        traceback.print_exc()
    finally:
        os._exit(code)


def _reseed() -> None:
    """A fork shares its parent's random state: give the kernel its own, as a fresh process
    has (torch's default generator starts from a fixed seed in every process anyway)."""
    import random

    random.seed()
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed()


def serve(sock: socket.socket, window: int | None) -> None:
    server_pid = os.getpid()
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    children: set[int] = set()
    # The window's end wakes the loop through a pidfd (Linux): it looked four times a second.
    ended = lifeline.parent_end_fd(window) if window is not None else None
    watched = [sock.fileno(), wake_r, *([ended] if ended is not None else [])]
    period = lifeline.WATCH_PERIOD_S if ended is None else lifeline.SLEEP_S
    _send(sock, {"ready": True})
    while True:
        if window is not None and os.getppid() != window:
            break  # the window is gone (the parent-death signal may not have come)
        try:
            readable, _, _ = select.select(watched, [], [], period)
        except InterruptedError:
            continue
        if ended is not None and ended in readable:
            break  # the window is gone
        if wake_r in readable:
            os.read(wake_r, 4096)
        _reap(sock, children)
        if sock.fileno() not in readable:
            continue
        try:
            data, fds, _flags, _addr = socket.recv_fds(sock, MAX_REQUEST_BYTES, 3)
        except OSError:
            break
        if not data:
            for fd in fds:
                os.close(fd)
            break  # the window closed its end
        try:
            request = json.loads(data)
            ident, env = int(request["id"]), dict(request["env"])
            if len(fds) != 3:
                raise ValueError(len(fds))  # stdin, stdout and stderr are three
        except (ValueError, KeyError, TypeError) as exc:
            for fd in fds:
                os.close(fd)
            _send(sock, {"id": None, "error": f"bad request: {exc}"})
            continue
        try:
            pid = os.fork()
        except OSError as exc:
            _send(sock, {"id": ident, "error": f"fork failed: {exc}"})
        else:
            if pid == 0:
                _run_kernel(env, fds, server_pid, [*watched, wake_w])
            children.add(pid)
            _send(sock, {"id": ident, "pid": pid})
        for fd in fds:
            os.close(fd)
    lifeline.end_children()


def main() -> int:
    sock = socket.socket(fileno=int(os.environ.pop(SOCKET_ENV)))
    window = os.getppid()
    try:
        if int(os.environ.get(PARENT_ENV, "")) != window:
            return 1  # started by someone else than the window it was meant for
    except ValueError:
        return 1
    lifeline.bind_to_parent()  # the parent-death signal; no side thread: forks follow
    preload()
    if not cuda_untouched():
        return 1  # never ready: the window starts its kernels the ordinary way
    serve(sock, window)
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
