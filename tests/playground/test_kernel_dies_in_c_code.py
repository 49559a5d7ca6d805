"""A window SIGKILLed while the user's code holds the GIL inside C (``sum(range(10**11))``)
leaves no kernel behind: neither Python's signal handlers nor the lifeline thread can run in
that kernel, so its end cannot depend on its interpreter. Both kinds of kernel: the first,
started the ordinary way (a child of the window), and one forked from the fork server."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest
from testkit import still_running

pytestmark = [pytest.mark.slow,  # a window-like process, real kernels: seconds
              pytest.mark.skipif(not sys.platform.startswith("linux"),
                                 reason="the parent-death signal and pidfds are Linux's")]
GONE_WITHIN_S = 3.0  # the bound: no kernel 3 s after the window died

# The window's side: the real KernelClient (as the window holds it). With ``forked``, the
# fork server is started first and the kernel is forked from it.
WINDOW_LIKE = textwrap.dedent("""
    import os, sys, time
    from gpumon.playground.client import forkserver
    from gpumon.playground.client.kernel_client import KernelClient, kernel_env
    from gpumon.playground.data.actions import RunCode
    if os.environ["FORKED"] == "1":
        assert forkserver.start_server(sys.executable, kernel_env()).wait_ready(120)
    client = KernelClient(lambda message: None)
    client.request("run", RunCode(
        "import os, subprocess\\n"
        "child = subprocess.Popen(['sleep', '60'])\\n"
        "open(os.environ['READY'], 'w').write(f'{os.getpid()} {child.pid}\\\\n')\\n"
        "x = sum(range(10**11))"))
    time.sleep(600)
""")


def _watchdogs(kernel: psutil.Process) -> list[int]:
    """Its parent (the first kernel's) or its child (a forked kernel's)."""
    return [c.pid for c in [kernel.parent(), *kernel.children()]
            if c is not None and "watchdog.py" in " ".join(c.cmdline())]


@pytest.mark.parametrize("forked", [False, True], ids=["first-kernel", "forked-kernel"])
def test_a_window_killed_inside_c_code_leaves_no_kernel(tmp_path: Path, forked: bool) -> None:
    ready = tmp_path / "ready"
    env = dict(os.environ, READY=str(ready), FORKED="1" if forked else "0",
               GPUMON_KERNEL_FORKSERVER="1" if forked else "0")
    window = subprocess.Popen([sys.executable, "-c", WINDOW_LIKE], env=env)
    pids: list[int] = []
    try:
        deadline = time.monotonic() + 120
        while not ready.exists() or not ready.read_text().endswith("\n"):
            assert window.poll() is None, f"the window ended early: {window.returncode}"
            assert time.monotonic() < deadline, "the kernel never ran the code"
            time.sleep(0.05)
        pids = [int(p) for p in ready.read_text().split()]
        kernel = psutil.Process(pids[0])
        parent = psutil.Process(kernel.ppid())  # its watchdog, or the fork server
        assert parent.ppid() == window.pid
        assert ("watchdog.py" in " ".join(parent.cmdline())) != forked
        time.sleep(0.5)  # inside sum() now: one C call, the GIL held throughout
        assert kernel.status() == psutil.STATUS_RUNNING and still_running(pids) == pids
        pids += _watchdogs(kernel)  # it must not outlive the kernel either
        window.kill()
        window.wait()
        deadline = time.monotonic() + GONE_WITHIN_S
        while still_running(pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert still_running(pids) == []
    finally:
        window.kill()
        window.wait()
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def test_a_clean_shutdown_leaves_no_watchdog() -> None:
    from gpumon.playground.client.kernel_client import KernelClient
    from gpumon.playground.data.actions import RunCode
    from tests.playground.kernel_helpers import Inbox

    inbox = Inbox()
    client = KernelClient(inbox)
    rid = client.request("run", RunCode("1"))
    assert inbox.wait("reply", rid, timeout=60).data.ok
    assert client.pid is not None
    (watchdog,) = _watchdogs(psutil.Process(client.pid))
    client.shutdown(timeout_s=1.0)
    deadline = time.monotonic() + GONE_WITHIN_S  # it sees the kernel's end at once
    while still_running([watchdog]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert still_running([watchdog]) == []
