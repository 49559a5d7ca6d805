"""The kernel's ties to its window: it imports what it should, and never outlives the window.

**Imports.** The window starts the kernel in gpumon's own folder, never in the user's
(kernel_client.py), so ``python -m`` puts no folder of the user's first on ``sys.path``: a
student's ``torch.py``, ``random.py`` or ``gpumon/`` cannot stand in for the real one. The
user's folder (:data:`FOLDER_ENV`) becomes the working folder and is appended to
``sys.path``, after the real modules, so the user's own modules still import.

**Lifetime.** Whatever ends the window (a clean quit, SIGKILL, a segfault, the OOM killer),
the kernel and every process it started end with it:

- on Linux the kernel asks for a parent-death signal (``PR_SET_PDEATHSIG``, SIGTERM, whose
  handler ends the kernel's children and then the kernel) and becomes a child subreaper
  (``PR_SET_CHILD_SUBREAPER``), so a process that the user's code daemonised (forked twice,
  new session) is re-parented to the kernel and is found and ended with it;
- on Linux a watchdog process (``watchdog.py``, an interpreter of its own; the kernel's
  parent, or for a forked kernel a process beside it) SIGKILLs the kernel and what it
  started when the window has ended and the kernel has not ended itself within
  :data:`GRACE_S`: the two ways above need the kernel's interpreter, and user code that
  holds the GIL inside one C call (``sum(range(10**11))``) keeps both from running; it
  also caps the kernel's memory;
- everywhere, a side thread checks every :data:`WATCH_PERIOD_S` that the window's process is
  still the kernel's parent (on Windows: still alive, with the start time it had), so this
  works while the user's code runs in the main thread and where no such signal exists. On
  Linux the thread sleeps on a pidfd of the parent instead, woken by its end (and looks
  every :data:`SLEEP_S` all the same): an idle kernel's thread woke four times a second.

The window's side ends the kernel's process group, too (kernel_client.py).
"""

from __future__ import annotations

import ctypes
import os
import select
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType

from gpumon.playground.data.wire import FOLDER_ENV, PARENT_ENV, process_end_fd
from gpumon.playground.kernel.watchdog import KEPT_ENV

#: How often the side thread looks at the window's process.
WATCH_PERIOD_S = 0.25
#: How often it looks while a pidfd wakes it when the window's process ends (Linux).
SLEEP_S = 5.0

#: How long the watchdog lets a kernel whose window has ended end itself before it kills it:
#: the handler's way (children ended, the user's files flushed) takes milliseconds.
GRACE_S = 1.0
WATCHDOG = Path(__file__).with_name("watchdog.py")

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36

#: Run just before the kernel ends because its window is gone (main.py: flush the user's
#: open files).
before_exit: list[Callable[[], object]] = []


def isolate_imports() -> None:
    """Make the user's folder the working folder, importable after everything else."""
    folder = os.environ.pop(FOLDER_ENV, None)
    if not folder:
        return
    try:
        os.chdir(folder)
    except OSError:  # gone or not readable: stay where the window started us
        return
    if folder not in sys.path:
        sys.path.append(folder)


def _parent_pid() -> int | None:
    try:
        pid = int(os.environ.get(PARENT_ENV, ""))
    except ValueError:
        return None
    return pid if pid > 0 else None


def bind_to_parent() -> None:
    """Ask for the parent-death signal and to be a subreaper (Linux), and end at once if the
    window is already gone."""
    signal.signal(signal.SIGTERM, _on_terminate)
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
            libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        except (OSError, AttributeError):  # no prctl here: the side thread still watches
            pass
    parent = _parent_pid()
    if parent is not None and not _parent_alive(parent, _start_time(parent)):
        end_now()


_watchdog: list[subprocess.Popen[bytes]] = []  # held: never collected while it runs


def start_watchdog() -> bool:
    """Start the watchdog process beside the kernel (Linux; ``watchdog.py``); False where it
    cannot run or a watchdog is the kernel's parent already."""
    parent = _parent_pid()
    if os.environ.pop(KEPT_ENV, "") == "1":
        return False  # the watchdog is this kernel's parent (watchdog.keep)
    if parent is None or not sys.platform.startswith("linux") or _watchdog:
        return False
    try:
        proc = subprocess.Popen(
            [sys.executable, "-I", "-S", str(WATCHDOG), str(parent), str(os.getpid()),
             str(GRACE_S)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            close_fds=True, start_new_session=True)
    except OSError:  # no process left to start: the handler and the thread still watch
        return False
    _watchdog.append(proc)
    threading.Thread(target=_restart_when_ended, args=(proc,), daemon=True,
                     name="gpumon-kernel-watchdog-minder").start()
    return True


def _restart_when_ended(proc: subprocess.Popen[bytes]) -> None:
    """A watchdog beside the kernel ends only with the kernel, or killed (the user's code
    can kill it): then start another, so the kernel never runs unwatched or uncapped."""
    proc.wait()
    if proc in _watchdog and not _ending:
        _watchdog.remove(proc)
        start_watchdog()


def _on_terminate(_signum: int, _frame: FrameType | None) -> None:
    end_now()


def _start_time(pid: int) -> float | None:
    if os.name == "posix":
        return None  # getppid() says it: a re-parented kernel has another parent
    try:
        import psutil

        return float(psutil.Process(pid).create_time())
    except Exception:  # psutil missing, or the process is gone
        return None


def _parent_alive(parent: int, started: float | None) -> bool:
    if os.name == "posix":
        return os.getppid() == parent
    try:
        import psutil

        proc = psutil.Process(parent)
        return started is None or abs(proc.create_time() - started) < 1.0
    except Exception:  # NoSuchProcess, AccessDenied
        return False


def parent_end_fd(parent: int) -> int | None:
    """A pidfd of ``parent`` while it is still the kernel's parent (Linux), else None."""
    if os.name != "posix":
        return None
    ended = process_end_fd(parent)
    if ended is not None and not _parent_alive(parent, None):  # gone meanwhile: not ours
        os.close(ended)
        return None
    return ended


def _sleep(fd: int, period_s: float) -> bool:
    """Sleep until ``fd`` is readable (True) or ``period_s`` has passed (False)."""
    poll = select.poll()
    poll.register(fd, select.POLLIN)
    return bool(poll.poll(round(period_s * 1000)))


def watch() -> threading.Thread | None:
    """Start the side thread that ends the kernel once the window's process is gone."""
    parent = _parent_pid()
    if parent is None:
        return None
    started = _start_time(parent)

    def run() -> None:
        ended = parent_end_fd(parent)
        stop = threading.Event()
        while True:
            if ended is None:
                stop.wait(WATCH_PERIOD_S)
            elif _sleep(ended, SLEEP_S):
                end_now()  # the pidfd says the window's process ended
            if not _parent_alive(parent, started):
                end_now()

    thread = threading.Thread(target=run, name="gpumon-kernel-lifeline", daemon=True)
    thread.start()
    return thread


_ending: list[bool] = []  # non-empty once the kernel is ending: no watchdog is restarted


def end_children() -> int:
    """Kill every process the kernel started, and theirs (SIGKILL); how many."""
    _ending.append(True)
    try:
        import psutil

        children = psutil.Process().children(recursive=True)
    except Exception:  # psutil missing or /proc unreadable
        return 0
    for child in children:
        try:
            child.kill()
        except Exception:  # gone already, or not ours to kill
            pass
    return len(children)


def end_now() -> None:
    """The window is gone: end the kernel's children, flush the user's files, exit."""
    end_children()
    for hook in before_exit:
        try:
            hook()
        except Exception:  # nothing may keep the kernel from ending
            pass
    os._exit(0)
