"""Stopping the kernel's running code: the one place that knows each platform's way.

POSIX: SIGINT, which Python turns into KeyboardInterrupt at the next bytecode. Windows: a
CTRL_BREAK_EVENT to the kernel's own process group (it is started with
CREATE_NEW_PROCESS_GROUP so the window does not receive it). Anywhere else: nothing gentle
exists, so the caller's grace period ends in a kill and a restart.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from typing import Literal, Protocol

InterruptPath = Literal["sigint", "ctrl_break", "none"]
#: What Stop did (KernelClient.interrupt): nothing ran, a gentle interrupt was sent (a kill and
#: a fresh kernel follow if the code runs on), the kernel was killed, or it was still starting
#: and was killed and started again.
Interrupted = Literal["idle", "signalled", "killed", "restarted"]


def interrupt_path(platform: str = sys.platform, os_name: str = os.name) -> InterruptPath:
    """Which gentle interrupt this platform offers a child process."""
    if platform == "win32":
        return "ctrl_break"
    if os_name == "posix":
        return "sigint"
    return "none"


def creation_flags(path: InterruptPath | None = None) -> int:
    """``subprocess.Popen``'s ``creationflags`` the chosen path needs at start (0: none)."""
    if (path or interrupt_path()) == "ctrl_break":
        return int(getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0x200))
    return 0


class Signalled(Protocol):
    """A kernel process: a ``subprocess.Popen`` or a forked kernel (forkserver.py)."""

    def poll(self) -> int | None: ...

    def send_signal(self, sig: int) -> None: ...


def send_interrupt(proc: Signalled, path: InterruptPath | None = None) -> bool:
    """Ask ``proc`` to stop its running code; False when no gentle way exists or it is gone."""
    chosen = path or interrupt_path()
    if proc.poll() is not None:
        return False
    try:
        if chosen == "sigint":
            proc.send_signal(signal.SIGINT)
        elif chosen == "ctrl_break":
            proc.send_signal(getattr(signal, "CTRL_BREAK_EVENT"))  # noqa: B009 - Windows only
        else:
            return False
    except (OSError, ValueError):  # it exited between poll() and the signal
        return False
    return True
