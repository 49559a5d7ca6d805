"""A kernel started under its watchdog (Linux): the window's side of ``watchdog.py --keep``.

The window starts the watchdog, which starts the kernel as its child and stays its parent
and child subreaper (``kernel/watchdog.py`` says why: a process the user's code daemonises
cannot leave it, whatever ends the kernel). A :class:`KeptKernel` stands for the kernel
where the client holds a ``subprocess.Popen``: ``pid`` is the kernel's (signals, NVML's
per-process memory, the kernel's process group), ``stdin`` and ``stdout`` are its pipes, and
``poll()`` and ``wait()`` read the watchdog's exit, which is the kernel's own status once it
has swept what the kernel left.

A watchdog that ends while the kernel still runs was killed (the user's code can find and
kill it). The kernel's parent-death signal then ends the kernel; one whose interpreter is
held inside one C call cannot, so a thread here SIGKILLs it by its pidfd at once, and
:attr:`KeptKernel.watchdog_lost` says why it ended: a SIGKILLed window then never leaves a
kernel running.

The memory cap (:func:`memory_cap`) goes to the watchdog in its environment. Where a user's
systemd manager runs (a desktop session), the watchdog and the kernel start in a systemd
scope of their own (:func:`scope_command`): a cgroup, which holds every process they start
and caps their memory together; the watchdog's subreaper and sweep work the same inside it.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]  # the folder that holds gpumon/
WATCHDOG = ROOT / "gpumon" / "playground" / "kernel" / "watchdog.py"
#: As in kernel/watchdog.py (the window imports nothing of the kernel's side).
CAP_ENV = "GPUMON_KERNEL_MEMORY_CAP"
REPORT_ENV = "GPUMON_KERNEL_REPORT"
REPORT_LINE = "gpumon-kernel-watchdog: "  # how its report begins on stderr, over ssh
STOP_HEADER = b"\xff\xff\xff\xff"  # the window's Stop over ssh
#: The kernel's memory cap as a fraction of the machine's memory (a setting: this variable,
#: 0 for no cap); the default leaves the window and the desktop room.
FRACTION_ENV = "GPUMON_KERNEL_MEMORY_FRACTION"
DEFAULT_FRACTION = 0.5
#: Set to "0" never to start the kernel in a systemd scope of its own (:func:`scope_command`).
SCOPE_ENV = "GPUMON_KERNEL_SCOPE"
#: Set in the watchdog's environment when it runs in such a scope (kernel/watchdog.py).
IN_SCOPE_ENV = "GPUMON_KERNEL_IN_SCOPE"
#: What each kernel gets as sent, which has no bearing on what the fork server imported
#: (client/forkserver.py).
KERNEL_SETTINGS = frozenset({CAP_ENV, REPORT_ENV, FRACTION_ENV, SCOPE_ENV, IN_SCOPE_ENV})
#: How the folder for the reports is named: the window's pid follows.
REPORT_PREFIX = "gpumon-kernel-"
#: Seconds a kernel whose window ended has to end itself (as lifeline.GRACE_S).
GRACE_S = 1.0
#: Seconds the watchdog has to say the kernel's pid (a fork and an exec: milliseconds).
START_TIMEOUT_S = 10.0


def memory_cap(fraction: float | None = None) -> int:
    """The kernel's memory cap in bytes: ``fraction`` (else :data:`FRACTION_ENV`, else
    :data:`DEFAULT_FRACTION`) of the machine's memory; 0 for none."""
    if fraction is None:
        try:
            fraction = float(os.environ.get(FRACTION_ENV, DEFAULT_FRACTION))
        except ValueError:
            fraction = DEFAULT_FRACTION
    if not 0 < fraction <= 1:  # 0, negative, NaN, above the machine: no cap
        return 0
    try:
        import psutil

        return int(psutil.virtual_memory().total * fraction)
    except Exception:
        return 0


def report_folder() -> str:
    """A private folder (``mkdtemp``: 0700) for the reports of this window's kernels. The
    empty folders of windows that have ended are removed first: a SIGKILLed window cannot
    remove its own (``rmdir`` removes only an empty folder, in a sticky temp folder only
    its owner's)."""
    tmp = tempfile.gettempdir()
    try:
        import psutil

        names = [n for n in os.listdir(tmp) if n.startswith(REPORT_PREFIX)]
        for name in names:
            pid = name[len(REPORT_PREFIX):].split("-")[0]
            if pid.isdigit() and not psutil.pid_exists(int(pid)):
                with contextlib.suppress(OSError):
                    os.rmdir(os.path.join(tmp, name))
    except (ImportError, OSError):
        pass
    return tempfile.mkdtemp(prefix=f"{REPORT_PREFIX}{os.getpid()}-")


def ran_out(report: str) -> tuple[int, int] | None:
    """``(used, cap)`` bytes when the watchdog ended the kernel for its memory (its report
    file), else None; the file is removed."""
    try:
        with open(report) as f:
            text = f.read(200)
        os.unlink(report)
    except OSError:
        return None
    return parse_report(text)


def parse_report(text: str) -> tuple[int, int] | None:
    """``(used, cap)`` from the watchdog's ``memory USED CAP``, else None (untrusted over
    ssh: only two numbers are taken from it)."""
    parts = text.split()
    numbers = "".join(parts[1:])
    if len(parts) != 3 or parts[0] != "memory" or not (numbers.isascii() and numbers.isdigit()) \
            or max(len(parts[1]), len(parts[2])) > 20:  # bytes, never a number past floats
        return None
    return int(parts[1]), int(parts[2])


def descendants(pid: int) -> list[Any]:
    """The processes ``pid`` started, and theirs (psutil.Process objects); [] if unknown."""
    try:
        import psutil

        return list(psutil.Process(pid).children(recursive=True))
    except Exception:
        return []


def kill_all(processes: Sequence[Any]) -> None:
    for p in processes:
        try:
            p.kill()
        except Exception:
            pass


def scope_command(cap: int, env: Mapping[str, str] = os.environ,
                  which: Callable[[str], str | None] = shutil.which,
                  exists: Callable[[str], bool] = os.path.exists) -> list[str]:
    """``systemd-run --user --scope`` with the memory cap, to put before the watchdog's
    command where a user's systemd manager answers on a unified (v2) cgroup hierarchy;
    else []. In a scope the kernel and all it starts share one cgroup, which no process of
    theirs can leave, and the kernel's memory cap (``MemoryMax``) counts all of them. Off
    with :data:`SCOPE_ENV` set to ``0``."""
    runtime = env.get("XDG_RUNTIME_DIR", "")
    tool = which("systemd-run")
    if env.get(SCOPE_ENV) == "0" or tool is None or not runtime.startswith("/") or \
            not exists(f"{runtime}/systemd/private") or \
            not exists("/sys/fs/cgroup/cgroup.controllers"):
        return []
    limits = ["-p", f"MemoryMax={cap}"] if cap > 0 else []
    return [tool, "--user", "--scope", "--quiet", "--collect", *limits, "--"]


def usable() -> bool:
    return sys.platform.startswith("linux") and hasattr(os, "pidfd_open")


class KeptKernel:
    """A kernel whose parent is its watchdog, with the part of ``subprocess.Popen`` the
    client uses."""

    def __init__(self, watchdog: subprocess.Popen[bytes], pid: int) -> None:
        self.pid = pid
        self.watchdog = watchdog
        self.args = watchdog.args
        self.stdin = watchdog.stdin
        self.stdout = watchdog.stdout
        self.watchdog_lost = False  # the watchdog ended first: the kernel was killed
        # taken while the watchdog lives: the kernel's pid is then still its unreaped child
        self._fd = os.pidfd_open(pid)
        self._lock = threading.Lock()
        self._minder = threading.Thread(target=self._mind, daemon=True,
                                        name=f"gpumon-kernel-watchdog-{pid}")
        self._minder.start()

    @property
    def returncode(self) -> int | None:
        return self.watchdog.returncode

    def _mind(self) -> None:
        self.watchdog.wait()
        if not self._ended(0):
            self.watchdog_lost = True
            # no subreaper above it now: stopped, so that it forks no more, what it started
            # is found while still below it
            self.send_signal(signal.SIGSTOP)
            kill_all(descendants(self.pid))
            self.kill()
            self._ended(5.0)
        with self._lock:  # ended: its pidfd is closed, never reused by mistake
            os.close(self._fd)
            self._fd = -1

    def _ended(self, timeout_s: float) -> bool:
        poll = select.poll()
        poll.register(self._fd, select.POLLIN)
        return bool(poll.poll(round(timeout_s * 1000)))

    def poll(self) -> int | None:
        return self.watchdog.poll()

    def wait(self, timeout: float | None = None) -> int:
        return self.watchdog.wait(timeout)

    def send_signal(self, sig: int) -> None:
        with self._lock:
            if self._fd < 0:
                return  # ended
            try:
                signal.pidfd_send_signal(self._fd, sig)
            except OSError:  # ended
                pass

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def spawn(command: list[str], env: dict[str, str], cwd: str) -> KeptKernel | None:
    """Start ``command`` as a kernel under its watchdog; None where that cannot be done (the
    caller starts the kernel the ordinary way)."""
    if not usable():
        return None
    read_end, write_end = os.pipe()
    cap = env.get(CAP_ENV, "")
    scope = scope_command(int(cap) if cap.isdigit() else 0, env)
    if scope:
        env = {**env, IN_SCOPE_ENV: "1"}
    try:
        watchdog = subprocess.Popen(
            [*scope, sys.executable, "-I", "-S", str(WATCHDOG), "--keep", str(GRACE_S),
             str(write_end), "--", *command], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            env=env, close_fds=True, pass_fds=(write_end,), cwd=cwd, start_new_session=True)
    except OSError:
        os.close(read_end)
        return None
    finally:
        os.close(write_end)
    try:
        text = b""
        poll = select.poll()
        poll.register(read_end, select.POLLIN)
        while not text.endswith(b"\n") and poll.poll(round(START_TIMEOUT_S * 1000)):
            chunk = os.read(read_end, 32)
            if not chunk:
                break
            text += chunk
    finally:
        os.close(read_end)
    if text.strip().isdigit():
        return KeptKernel(watchdog, int(text))
    watchdog.kill()  # it could not start the kernel
    watchdog.wait()
    for stream in (watchdog.stdin, watchdog.stdout):
        if stream is not None:
            stream.close()
    return None
