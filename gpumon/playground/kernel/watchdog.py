"""The kernel's watchdog (Linux): a tiny process that ends the kernel when its window is gone,
caps the kernel's memory, and ends every process the kernel started, wherever they went.

The kernel's own ways to end with its window (``lifeline.py``: the parent-death signal's
Python handler, the lifeline thread) need its interpreter, and user code that holds the GIL
inside one C call (``x = sum(range(10**11))``) keeps both from running: such a kernel was
still running 8 s after its window was SIGKILLed. This process has an interpreter of its own,
imports only the standard library (no gpumon, no torch: about 9 MB) and sleeps on pidfds.

It runs in one of two places:

- **Above the kernel** (``--keep``; the window starts every kernel it does not fork this
  way, ``client/keeper.py``): it is the kernel's parent, in a session of its own, and a child
  subreaper (``PR_SET_CHILD_SUBREAPER``): a process the user's code daemonises (forks twice,
  ``setsid``) is re-parented to the kernel while the kernel lives (the kernel is a subreaper
  too) and to this process once the kernel has ended, however it ended (a segfault, the OOM
  killer, ``os._exit``). When the kernel has ended it SIGKILLs every process left below it
  and exits with the kernel's own status (the same code, or the same signal), so the window
  reads the kernel's end from it. Killing it does not free the kernel: the kernel's
  parent-death signal and lifeline thread end it, and the window, which sees its end at
  once, kills the kernel by its pidfd when those cannot run. With ``--connection`` it also
  watches the kernel's stdin for its other end hanging up, for a window at the far end of
  an ``ssh`` connection (issue 50), whose process it cannot watch: the parent it watches
  is then the ``sshd`` session, and the connection's end ends the kernel within the grace.
  There ``cli/kernel.py`` starts it (``-1``: the kernel's pid is in its ``hello``), and
  a link silent for :data:`SILENCE_ENV` seconds (:class:`Silence`) ends the kernel too.
  Where a user's systemd manager runs, it and the kernel start in a systemd scope of their
  own (a cgroup no descendant can leave, ``MemoryMax`` the memory cap): the sweep then also
  ends every process left in that cgroup, and a kill by the scope's memory limit is
  reported as the cap's.
- **Beside the kernel** (a forked kernel starts it, ``lifeline.start_watchdog``): the fork
  server is that kernel's parent and subreaper; this process ends the kernel when its
  parent is gone and caps its memory.

**Memory.** With :data:`CAP_ENV` set (bytes), it reads the kernel's resident set
(``/proc/PID/statm``) every :data:`MEMORY_PERIOD_S` and, above the cap, stops the kernel,
SIGKILLs it and what it started, and writes ``memory USED CAP`` to the file named by
:data:`REPORT_ENV`, from which the window says "the kernel ran out of its N GB". An
address-space limit (``RLIMIT_AS``) would break CUDA, which reserves hundreds of GB of
virtual addresses at its start; ``RLIMIT_DATA`` counts private writable mappings, and how
the CUDA driver maps pinned and managed memory is the driver's business: neither limit
can be trusted with a GPU, the resident set can. Typed recursion grew a kernel by 1.5 GB a
second, so it can pass the cap by about 150 MB before it is stopped.
"""

from __future__ import annotations

import array
import fcntl
import os
import select
import signal
import sys
import termios
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

#: How often it looks where there are no pidfds (Linux before 5.3).
POLL_S = 0.25
#: How often it reads the kernel's resident memory when a cap is set and the kernel is near
#: it; further from it, as often as the kernel could grow to it at :data:`FASTEST_GROWTH`
#: (an idle kernel far below its cap is looked at every :data:`MAX_PERIOD_S`).
MEMORY_PERIOD_S = 0.1
MAX_PERIOD_S = 2.0
#: Bytes a second: typed recursion grew a kernel by 1.5 GB a second; twice that for margin.
FASTEST_GROWTH = 3e9
#: The kernel's memory cap in bytes (unset or 0: no cap).
CAP_ENV = "GPUMON_KERNEL_MEMORY_CAP"
#: A file the watchdog writes ``memory USED CAP`` to when it ends the kernel for its memory.
REPORT_ENV = "GPUMON_KERNEL_REPORT"
#: Set in a kept kernel's environment: its parent is its watchdog (it starts none of its own).
KEPT_ENV = "GPUMON_KERNEL_KEPT"
#: Set when it runs in a systemd scope of its own (``client/keeper.py``).
IN_SCOPE_ENV = "GPUMON_KERNEL_IN_SCOPE"
#: As in ``gpumon.playground.data.wire`` (this file imports nothing of gpumon).
PARENT_ENV = "GPUMON_KERNEL_PARENT"
#: Over ssh: seconds the link may be silent (:class:`Silence`); the window beats every second.
SILENCE_ENV = "GPUMON_KERNEL_SILENCE_S"
BEAT_FD_ENV = "GPUMON_KERNEL_BEAT_FD"
_PR_SET_CHILD_SUBREAPER = 36


def parent_of(pid: int) -> int | None:
    """The parent of ``pid`` (/proc), None once it has ended (or is a zombie)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2:].split()  # the name may hold spaces and brackets
    return None if fields[0] in (b"Z", b"X") else int(fields[1])


def _descendants(root: int) -> list[int]:
    """Every process below ``root``, from /proc (this process left out)."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            parent = parent_of(int(name))
            if parent is not None:
                children.setdefault(parent, []).append(int(name))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child != os.getpid():
                found.append(child)
                todo.append(child)
    return found


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:  # gone already
        pass


def end_kernel(kernel: int, kernel_fd: int | None) -> None:
    """Stop the kernel (it forks no more), SIGKILL what it started, then the kernel."""
    try:
        os.kill(kernel, signal.SIGSTOP)
    except OSError:
        return
    for _ in range(2):  # a second look: a child may have forked during the first
        for pid in _descendants(kernel):
            _kill(pid)
    if kernel_fd is not None:  # by its pidfd: never another process that got its pid
        try:
            signal.pidfd_send_signal(kernel_fd, signal.SIGKILL)
        except OSError:
            pass
    else:
        _kill(kernel)


def _pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (OSError, AttributeError):
        return None


def memory_cap() -> int:
    """The cap from :data:`CAP_ENV` in bytes; 0 for none (unset or not a number)."""
    try:
        return max(0, int(os.environ.get(CAP_ENV, "0")))
    except ValueError:
        return 0


def resident_bytes(pid: int) -> int:
    """``pid``'s resident set in bytes; 0 once it has ended."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, IndexError, ValueError):
        return 0


def over_cap(kernel: int, kernel_fd: int | None, cap: int) -> float | None:
    """End the kernel and write the report if it holds more than ``cap`` bytes (None);
    else the seconds until it could, growing at :data:`FASTEST_GROWTH`, pass it."""
    used = resident_bytes(kernel) if cap else 0
    if used <= cap:
        return (cap - used) / FASTEST_GROWTH
    report = os.environ.get(REPORT_ENV)
    if report:
        try:
            with open(report, "w") as f:
                f.write(f"memory {used} {cap}\n")
        except OSError:  # the window then reports a plain SIGKILL
            pass
    end_kernel(kernel, kernel_fd)
    return None


class Silence:
    """A link silent without closing (a laptop asleep, a cut cable; sshd's keep-alive is off
    by default): alive while the kernel reads the window's beats (a byte each on ``beats``)
    or, held in one C call, while unread bytes keep coming on ``stdin`` (FIONREAD)."""

    def __init__(self, beats: int, stdin: int, limit_s: float) -> None:
        self.beats, self.stdin, self.limit_s = beats, stdin, limit_s
        self.last, self.waiting = time.monotonic(), 0

    def dead(self, ready: set[int]) -> bool:
        now, count = time.monotonic(), array.array("i", [0])
        try:
            if self.beats in ready:
                os.read(self.beats, 4096)
                self.last = now
            fcntl.ioctl(self.stdin, termios.FIONREAD, count)
        except OSError:
            pass
        if count[0] != self.waiting:
            self.waiting, self.last = count[0], now if count[0] else self.last
        return now - self.last > self.limit_s


def _wait(kernel: int, kernel_fd: int | None, ends: list[tuple[int, int]], cap: int,
          still_ours: Callable[[], bool], silence: Silence | None = None) -> str:
    """Sleep until the kernel ends (``"kernel"``), the window does (``"window"``: one of
    ``ends``, ``(fd, poll events)``, is ready, ``still_ours()`` turns False or the link is
    ``silence``'s dead) or the kernel passes its cap (``"memory"``, the kernel ended)."""
    poll = select.poll()
    if kernel_fd is not None:
        poll.register(kernel_fd, select.POLLIN)
    for fd, events in ends:
        poll.register(fd, events)
    if silence is not None:
        poll.register(silence.beats, select.POLLIN)
    watched = kernel_fd is not None or bool(ends)
    next_look = MEMORY_PERIOD_S
    while True:
        period = min(next_look, POLL_S if not ends else MAX_PERIOD_S) if cap else \
            (None if ends else POLL_S)
        period = min(period or 1.0, 1.0) if silence else period
        if watched:
            ready = {fd for fd, _ in poll.poll(None if period is None else round(period * 1000))}
        else:
            time.sleep(period or POLL_S)
            ready = set()
        if kernel_fd in ready or parent_of(kernel) is None:
            return "kernel"
        if cap:
            left = over_cap(kernel, kernel_fd, cap)
            if left is None:
                return "memory"
            next_look = max(MEMORY_PERIOD_S, left)
        if silence is not None and silence.dead(ready):
            return "window"
        if ready - {kernel_fd, silence and silence.beats} or not still_ours():
            return "window"


def _grace(kernel: int, kernel_fd: int | None, grace_s: float) -> bool:
    """Give the kernel ``grace_s`` to end itself; True if it did."""
    if kernel_fd is not None:
        poll = select.poll()
        poll.register(kernel_fd, select.POLLIN)
        return bool(poll.poll(round(grace_s * 1000)))
    deadline = time.monotonic() + grace_s
    while parent_of(kernel) is not None and time.monotonic() < deadline:
        time.sleep(POLL_S / 5)
    return parent_of(kernel) is None


def watch(window: int, kernel: int, grace_s: float) -> None:
    """Beside the kernel: end it once ``window`` is no longer its parent (after
    ``grace_s``), or once it passes its memory cap; return when it has ended."""
    kernel_fd = _pidfd(kernel)
    # the window's pidfd is its own only while it is still the kernel's parent
    window_fd = _pidfd(window) if parent_of(kernel) == window else None
    if window_fd is None and parent_of(kernel) != window:
        if parent_of(kernel) is None:
            return  # the kernel ended: nothing to watch
    elif _wait(kernel, kernel_fd, [] if window_fd is None else [(window_fd, select.POLLIN)],
               memory_cap(), lambda: parent_of(kernel) in (window, None)) != "window":
        return
    if not _grace(kernel, kernel_fd, grace_s):
        end_kernel(kernel, kernel_fd)


def _own_cgroup() -> str | None:
    """This process's cgroup folder (v2) when it runs in a scope of its own, else None."""
    if os.environ.get(IN_SCOPE_ENV) != "1":
        return None
    try:
        with open("/proc/self/cgroup") as f:
            for line in f:
                if line.startswith("0::/"):
                    return "/sys/fs/cgroup" + line[3:].strip()
    except OSError:
        pass
    return None


def _cgroup_file(group: str, name: str) -> str:
    try:
        with open(f"{group}/{name}") as f:
            return f.read(4096)
    except OSError:
        return ""


def scope_ran_out(group: str | None) -> None:
    """Write the report when the scope's own memory limit (``MemoryMax``) killed in it."""
    if group is None:
        return
    events = dict(line.split()[:2] for line in _cgroup_file(group, "memory.events")
                  .splitlines() if len(line.split()) >= 2)
    cap = _cgroup_file(group, "memory.max").strip()
    report = os.environ.get(REPORT_ENV)
    if events.get("oom_kill", "0") != "0" and cap.isdigit() and report:
        used = _cgroup_file(group, "memory.peak").strip()
        try:
            with open(report, "w") as f:
                f.write(f"memory {used if used.isdigit() else cap} {cap}\n")
        except OSError:
            pass


def sweep(group: str | None = None) -> None:
    """SIGKILL every process below this one and reap them (a subreaper's children), and
    every other process of its scope's cgroup (``group``) if it has one."""
    for _ in range(3):
        pids = _descendants(os.getpid())
        if group is not None:
            pids += [int(p) for p in _cgroup_file(group, "cgroup.procs").split()
                     if p.isdigit() and int(p) != os.getpid()]
        if not pids:
            break
        for pid in pids:
            _kill(pid)
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:
            try:
                if os.waitpid(-1, os.WNOHANG)[0] == 0:
                    time.sleep(0.01)
            except ChildProcessError:
                break


def _exit_as(status: int) -> None:
    """Exit as the kernel did: with its code, or killed by its signal (no core file)."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            import resource

            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        except (OSError, ValueError, ImportError):
            pass
        try:  # SIGKILL and SIGSTOP have no handler to reset
            signal.signal(sig, signal.SIG_DFL)
        except (OSError, ValueError):
            pass
        try:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])
            os.kill(os.getpid(), sig)
        except (OSError, ValueError):
            pass
        os._exit(128 + sig)
    os._exit(os.waitstatus_to_exitcode(status) & 0xFF)


def keep(grace_s: float, pid_fd: int, command: list[str], connection: bool = False) -> None:
    """Above the kernel: start ``command`` as the kernel (a session of its own; its pid
    written to ``pid_fd`` unless that is -1), watch it and the window (this process's
    parent), then sweep and exit as the kernel did. With ``connection`` the window may be
    at the other end of the kernel's stdin (``ssh``): its hang-up ends the kernel too,
    whatever the kernel's own interpreter is doing."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError, ImportError):  # the kernel is a subreaper all the same
        pass
    window = os.getppid()
    os.environ[PARENT_ENV] = str(os.getpid())
    os.environ[KEPT_ENV] = "1"
    beats = _beat_pipe() if connection else None
    kernel = os.fork()
    if kernel == 0:
        try:
            os.setsid()  # before the window hears of it: it signals the kernel's group
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            if pid_fd >= 0:
                os.write(pid_fd, f"{os.getpid()}\n".encode())
                os.close(pid_fd)
            os.execvp(command[0], command)
        finally:
            os._exit(127)
    if pid_fd >= 0:
        os.close(pid_fd)
    ends = [(fd, events) for fd, events in [connection_end(0)] if connection and fd >= 0]
    if beats is not None:
        os.close(beats[1])
    silence = Silence(beats[0], ends[0][0], beats[2]) if beats and ends else None
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):  # the pipes are the kernel's alone: its end closes them
        os.dup2(devnull, fd)
    os.close(devnull)
    kernel_fd, window_fd = _pidfd(kernel), _pidfd(window)
    if window_fd is not None:
        ends.append((window_fd, select.POLLIN))
    if os.getppid() != window:  # the window ended before its pidfd was taken
        why = "window"
    else:
        why = _wait(kernel, kernel_fd, ends, memory_cap(), lambda: os.getppid() == window,
                    silence)
    if why == "window" and not _grace(kernel, kernel_fd, grace_s):
        end_kernel(kernel, kernel_fd)
    _, status = os.waitpid(kernel, 0)
    group = _own_cgroup()
    scope_ran_out(group)
    sweep(group)
    _exit_as(status)


def _beat_pipe() -> tuple[int, int, float] | None:
    """The beats' pipe (the kernel inherits its write end, named in :data:`BEAT_FD_ENV`,
    which never blocks it) and the limit, where :data:`SILENCE_ENV` sets one; else None."""
    text = os.environ.get(SILENCE_ENV, "")
    if not text.replace(".", "", 1).isdigit() or not float(text) > 0:
        return None
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    os.set_inheritable(write_end, True)
    os.environ[BEAT_FD_ENV] = str(write_end)
    return read_end, write_end, float(text)


def connection_end(fd: int) -> tuple[int, int]:
    """A copy of ``fd`` (the kernel's stdin) and the poll events that say only that its
    other end hung up, never that data came (the kernel reads that): a pipe reports
    POLLHUP unasked; a socket, POLLRDHUP. (-1, 0) if it cannot be copied."""
    try:
        copy = os.dup(fd)
    except OSError:
        return -1, 0
    import stat

    is_socket = stat.S_ISSOCK(os.fstat(copy).st_mode)
    return copy, (getattr(select, "POLLRDHUP", 0x2000) if is_socket else 0)


def main(argv: list[str]) -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's Ctrl+C is the window's
    try:
        if argv[1] == "--keep":
            grace_s, pid_fd, rest = float(argv[2]), int(argv[3]), argv[4:]
            connection = rest[:1] == ["--connection"]
            rest = rest[1:] if connection else rest
            if rest[:1] != ["--"] or len(rest) < 2:
                return 2
            keep(grace_s, pid_fd, rest[1:], connection)
            return 0
        window, kernel, grace_s = int(argv[1]), int(argv[2]), float(argv[3])
    except (IndexError, ValueError):
        return 2
    watch(window, kernel, grace_s)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
