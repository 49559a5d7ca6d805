"""Sending a signal to a GPU process, or the one sentence that says why not. Qt-free.

:func:`refusal` checks before anything is asked of the user; :func:`send` checks again at the
moment of sending (the process may have ended meanwhile, or its PID been reused: psutil
compares the start time it read with the process's own). A process may be signalled when it
is visible here and the kernel would allow it: this user is root, or its real or effective
user id is the process's real or saved one (kill(2)). PID 1 and gpumon itself never are.
On Windows only terminating is offered (there is no SIGINT or SIGKILL to send to another
process; psutil's terminate is TerminateProcess).
"""

from __future__ import annotations

import os
import signal
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpumon.i18n import N_, tr

if TYPE_CHECKING:  # imported where a signal is sent: not before the window's first frame
    import psutil


@dataclass(frozen=True, slots=True)
class Action:
    """One way to end a process: its menu words, its key and the signal sent."""

    label: str  # N_() text, translated when shown
    verb: str  # N_() text for the confirmation: "Terminate", ...
    key: str  # the table's key for it (nvitop's: I, T, K)
    signum: int


INTERRUPT = Action(N_("Interrupt (SIGINT)"), N_("Interrupt"), "I", int(signal.SIGINT))
TERMINATE = Action(N_("Terminate (SIGTERM)"), N_("Terminate"), "T", int(signal.SIGTERM))
KILL = Action(N_("Kill (SIGKILL)"), N_("Kill"), "K", int(getattr(signal, "SIGKILL", 9)))
ACTIONS: tuple[Action, ...] = ((TERMINATE,) if sys.platform == "win32"
                               else (INTERRUPT, TERMINATE, KILL))


def _may_signal(proc: psutil.Process) -> bool:
    """kill(2)'s rule: root, or a real or effective uid equal to the target's real or saved."""
    if not hasattr(os, "geteuid"):  # Windows: the OS decides when we try
        return True
    if os.geteuid() == 0:
        return True
    real, _, saved = proc.uids()
    return bool({os.getuid(), os.geteuid()} & {real, saved})


def refusal(pid: int, started_s: float | None = None) -> str | None:
    """Why ``pid`` may not be signalled from here, in one sentence; None when it may.
    ``started_s``: the start time the table showed (a different one: the PID was reused)."""
    if pid <= 1:
        return tr("Process {pid} is the system's first process; gpumon never signals it.",
                  pid=pid)
    if pid == os.getpid():
        return tr("Process {pid} is this gpumon; close the window instead.", pid=pid)
    import psutil

    try:
        proc = psutil.Process(pid)
        if started_s is not None and abs(proc.create_time() - started_s) > 1.0:
            return tr("Process {pid} has ended; its number now belongs to another program.",
                      pid=pid)
        if not _may_signal(proc):
            return tr("Process {pid} belongs to {user}; only that user or an administrator "
                      "may signal it.", pid=pid, user=_user(proc))
    except (psutil.NoSuchProcess, psutil.AccessDenied) as exc:
        return _unreachable(pid, exc)
    return None


def send(pid: int, action: Action, started_s: float | None = None) -> str | None:
    """Send ``action``'s signal to ``pid``; None when sent, else the sentence why not."""
    why = refusal(pid, started_s)
    if why is not None:
        return why
    import psutil

    try:
        proc = psutil.Process(pid)
        if action is TERMINATE:
            proc.terminate()  # SIGTERM here; TerminateProcess on Windows
        else:
            proc.send_signal(action.signum)  # psutil refuses a reused PID itself
    except (psutil.NoSuchProcess, psutil.AccessDenied) as exc:
        return _unreachable(pid, exc)
    return None


def _unreachable(pid: int, exc: Exception) -> str:
    """The sentence for a process psutil cannot find, or may not touch."""
    import psutil

    if isinstance(exc, psutil.NoSuchProcess):
        return tr("Process {pid} has ended, or runs in a container whose processes are not "
                  "visible here.", pid=pid)
    return tr("Process {pid} is not yours to signal.", pid=pid)


def _user(proc: psutil.Process) -> str:
    import psutil

    try:
        return str(proc.username())
    except psutil.Error:
        return tr("another user")
