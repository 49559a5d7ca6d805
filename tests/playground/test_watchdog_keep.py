"""The watchdog above a kernel (``watchdog.py --keep``), driven directly as a window or an
``sshd`` session would: it exits as the kernel did, and with ``--connection`` the far end
hanging up on the kernel's stdin ends a kernel that ignores it, with what it started."""

from __future__ import annotations

import os
import random
import select
import signal
import socket
import subprocess
import sys
import textwrap
import time

import psutil
import pytest
from testkit import running

from gpumon.playground.kernel import watchdog

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="subreapers and pidfds are Linux's")

# A kernel that ignores SIGTERM and its stdin, after starting a daemon (forked twice, a
# session of its own) that runs ``sleep MARK``.
STUBBORN = textwrap.dedent("""
    import os, signal, sys, time
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execvp("sleep", ["sleep", sys.argv[1]])
        os._exit(0)
    os.wait()
    time.sleep(600)
""")


def _start(command: list[str], stdin: int | None, connection: bool = False,
           ) -> tuple[subprocess.Popen[bytes], int]:
    read_end, write_end = os.pipe()
    proc = subprocess.Popen(
        [sys.executable, "-I", "-S", str(watchdog.__file__), "--keep", "0.5", str(write_end),
         *(["--connection"] if connection else []), "--", *command],
        stdin=stdin, pass_fds=(write_end,), start_new_session=True)
    os.close(write_end)
    poll = select.poll()
    poll.register(read_end, select.POLLIN)
    assert poll.poll(30_000)
    pid = int(os.read(read_end, 32))
    os.close(read_end)
    return proc, pid


def _marked(mark: str) -> list[int]:
    return [p.pid for p in psutil.process_iter(["cmdline", "status"])
            if p.info["cmdline"] == ["sleep", mark] and p.info["status"] != psutil.STATUS_ZOMBIE]


@pytest.mark.parametrize(("code", "expected"), [
    ("import os; os._exit(3)", 3),
    ("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)", -signal.SIGSEGV),
    ("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", -signal.SIGKILL),
], ids=["code-3", "segfault", "sigkill"])
def test_it_exits_as_the_kernel_did(code: str, expected: int) -> None:
    proc, kernel = _start([sys.executable, "-c", code], subprocess.DEVNULL)
    assert proc.wait(30) == expected
    assert not running(kernel)


@pytest.mark.slow
@pytest.mark.parametrize("link", ["pipe", "socket"])
def test_the_far_end_hanging_up_ends_a_kernel_that_ignores_it(link: str) -> None:
    mark = f"{random.randrange(10**6, 10**7)}.5"
    ours, theirs = socket.socketpair() if link == "socket" else (None, None)
    if theirs is not None:
        stdin: int = theirs.fileno()
    else:
        stdin_r, stdin_w = os.pipe()
        stdin = stdin_r
    proc, kernel = _start([sys.executable, "-c", STUBBORN, mark], stdin, connection=True)
    os.close(stdin) if theirs is None else theirs.close()
    try:
        deadline = time.monotonic() + 30
        while not _marked(mark):
            assert time.monotonic() < deadline, "the daemon never started"
            time.sleep(0.05)
        # data that the kernel never reads does not count as a hang-up
        if ours is not None:
            ours.sendall(b"x" * 1000)
        else:
            os.write(stdin_w, b"x" * 1000)
        time.sleep(1.0)  # longer than the grace
        assert proc.poll() is None and running(kernel)
        if ours is not None:
            ours.close()
        else:
            os.close(stdin_w)
        assert proc.wait(10) == -signal.SIGKILL  # the kernel's own end: killed
        assert not running(kernel)
        deadline = time.monotonic() + 5
        while _marked(mark) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _marked(mark) == []
    finally:
        proc.kill()
        proc.wait()
        for pid in [kernel, *_marked(mark)]:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def test_bad_arguments_are_refused() -> None:
    for args in (["--keep"], ["--keep", "1", "x", "--", "true"], ["--keep", "1", "5", "true"],
                 ["--keep", "1", "5", "--"]):
        assert watchdog.main(["watchdog.py", *args]) == 2


def test_over_ssh_it_needs_no_pid_pipe() -> None:
    """Started by an ``sshd`` session (issue 50) there is no pipe for the pid (``-1``): the
    connection's end still ends the kernel, and the watchdog exits as the kernel did."""
    stdin_r, stdin_w = os.pipe()
    proc = subprocess.Popen(
        [sys.executable, "-I", "-S", str(watchdog.__file__), "--keep", "0.5", "-1",
         "--connection", "--", sys.executable, "-c",
         "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"],
        stdin=stdin_r, start_new_session=True)
    os.close(stdin_r)
    kernels: list[psutil.Process] = []
    try:
        deadline = time.monotonic() + 30
        while not (kernels := psutil.Process(proc.pid).children()):
            assert time.monotonic() < deadline, "no kernel"
            time.sleep(0.05)
        os.close(stdin_w)
        assert proc.wait(10) == -signal.SIGKILL
        assert not running(kernels[0].pid)
    finally:
        proc.kill()
        proc.wait()
        for kernel in kernels:
            try:
                kernel.kill()
            except psutil.NoSuchProcess:
                pass
