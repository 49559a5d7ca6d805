"""The kernel's lifeline thread sleeps until the window's process ends (a pidfd on Linux): an
idle kernel's thread woke four times a second to look, and the kernel still ends at once
when the window's process is gone, here without the parent-death signal's help."""

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

from gpumon.playground.data.wire import PARENT_ENV

pytestmark = pytest.mark.skipif(not hasattr(os, "pidfd_open") or
                                not Path("/proc/self/task").is_dir(),
                                reason="pidfds and /proc are Linux's")

KERNEL_LIKE = textwrap.dedent("""
    import os, time
    from gpumon.playground.kernel import lifeline
    thread = lifeline.watch()  # no bind_to_parent(): no parent-death signal to help
    open(os.environ["READY"], "w").write(f"{os.getpid()} {thread.native_id}\\n")
    time.sleep(600)
""")

WINDOW_LIKE = textwrap.dedent("""
    import os, subprocess, sys, time
    env = dict(os.environ, {parent_env}=str(os.getpid()))
    subprocess.Popen([sys.executable, "-c", {kernel!r}], env=env)
    time.sleep(600)
""")


def _switches(pid: int, tid: int) -> int:
    status = Path(f"/proc/{pid}/task/{tid}/status").read_text()
    return sum(int(line.split()[1]) for line in status.splitlines() if "ctxt_switches:" in line)


def test_the_lifeline_sleeps_and_still_ends_the_kernel_with_its_window(tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    code = WINDOW_LIKE.format(parent_env=PARENT_ENV, kernel=KERNEL_LIKE)
    window = subprocess.Popen([sys.executable, "-c", code], env=dict(os.environ,
                                                                      READY=str(ready)))
    kernel = -1
    try:
        deadline = time.monotonic() + 30
        while not ready.exists() or not ready.read_text().endswith("\n"):
            assert window.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        kernel, thread = (int(n) for n in ready.read_text().split())
        time.sleep(0.2)
        before = _switches(kernel, thread)
        time.sleep(1.2)
        assert _switches(kernel, thread) - before <= 2  # every 0.25 s: 4 or 5
        window.kill()
        window.wait()
        psutil.Process(kernel).wait(2.0)  # ended (and reaped by init) within 2 s
    finally:
        window.kill()
        window.wait()
        if kernel > 0:
            try:
                os.kill(kernel, signal.SIGKILL)
            except OSError:
                pass
