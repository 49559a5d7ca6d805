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
  once, kills the kernel by its pidfd when those cannot run. With ``--connection``
  (``cli/kernel.py``: a window at the far end of ``ssh``, issue 50) the window's bytes reach
  the kernel through it (:class:`Relay`): the connection's end or silence ends the kernel
  within the grace, and the window's Stop is a SIGINT from here.
  Where a user's systemd manager runs, it and the kernel start in a systemd scope of their
  own (a cgroup no descendant can leave, ``MemoryMax`` the memory cap): the sweep then also
  ends every process left in that cgroup, and a kill by the scope's memory limit is
  reported as the cap's.
- **Beside the kernel** (a forked kernel starts it, ``lifeline.start_watchdog``): the fork
  server is that kernel's parent and subreaper; this process ends the kernel when its
  parent is gone and caps its memory.

**Memory.** With :data:`CAP_ENV` set (bytes), it reads the kernel's resident set every
:data:`MEMORY_PERIOD_S` and, above the cap, ends the kernel and what it started and reports
``memory USED CAP`` (:func:`report`), from which the window says "the kernel ran out of its
N GB". ``RLIMIT_AS`` would break CUDA (it reserves hundreds of GB of addresses at its start)
and how the CUDA driver maps memory is beyond ``RLIMIT_DATA``: only the resident set can be
trusted with a GPU. Typed recursion grew a kernel by 1.5 GB a second: it can pass the cap by
about 150 MB before it is stopped.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
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
#: How the report's line begins on stderr (over ssh), among whatever else is written there.
REPORT_LINE = "gpumon-kernel-watchdog: "
#: Set in a kept kernel's environment: its parent is its watchdog (it starts none of its own).
KEPT_ENV = "GPUMON_KERNEL_KEPT"
#: Set when it runs in a systemd scope of its own (``client/keeper.py``).
IN_SCOPE_ENV = "GPUMON_KERNEL_IN_SCOPE"
#: As in ``gpumon.playground.data.wire`` (this file imports nothing of gpumon).
PARENT_ENV = "GPUMON_KERNEL_PARENT"
#: Over ssh: seconds the link may be silent (:class:`Relay`); the window beats every second.
SILENCE_ENV = "GPUMON_KERNEL_SILENCE_S"
#: Over ssh, the window's Stop (:class:`Relay`): a frame header no frame has (over 64 MiB).
STOP_HEADER = b"\xff\xff\xff\xff"
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


def _signal(pid: int, pid_fd: int | None, sig: int) -> None:
    try:  # by its pidfd where there is one: never another process that got its pid
        signal.pidfd_send_signal(pid_fd, sig) if pid_fd is not None else os.kill(pid, sig)
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
            _signal(pid, None, signal.SIGKILL)
    _signal(kernel, kernel_fd, signal.SIGKILL)


def _pidfd(pid: int) -> int | None:
    with contextlib.suppress(OSError, AttributeError):
        return os.pidfd_open(pid)
    return None


def memory_cap() -> int:
    """The cap from :data:`CAP_ENV` in bytes; 0 for none (unset or not a number)."""
    with contextlib.suppress(ValueError):
        return max(0, int(os.environ.get(CAP_ENV, "0")))
    return 0


def resident_bytes(pid: int) -> int:
    """``pid``'s resident set in bytes; 0 once it has ended."""
    with contextlib.suppress(OSError, IndexError, ValueError), open(f"/proc/{pid}/statm",
                                                                      "rb") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    return 0


def over_cap(kernel: int, kernel_fd: int | None, cap: int) -> float | None:
    """End the kernel and write the report if it holds more than ``cap`` bytes (None);
    else the seconds until it could, growing at :data:`FASTEST_GROWTH`, pass it."""
    used = resident_bytes(kernel) if cap else 0
    if used <= cap:
        return (cap - used) / FASTEST_GROWTH
    report(used, cap)
    end_kernel(kernel, kernel_fd)
    return None


def report(used: int | str, cap: int | str) -> None:
    """Write ``memory USED CAP`` where :data:`REPORT_ENV` says: a file the window reads, or,
    with ``-`` (over ssh, ``cli/kernel.py``), this process's stderr: the window's ssh's."""
    where, line = os.environ.get(REPORT_ENV), f"{REPORT_LINE}memory {used} {cap}\n"
    try:
        if where == "-":
            os.write(2, line.encode())
        elif where:
            with open(where, "w") as f:
                f.write(line[len(REPORT_LINE):])
    except OSError:  # the window then reports a plain SIGKILL
        pass


class Relay:
    """Over ssh: the connection's bytes (``conn``) to the kernel's stdin (``out``), frame by
    frame; the window's Stop (a bare :data:`STOP_HEADER`) is a SIGINT, as a local window's
    Stop is: a kernel held in one C call (a regex backtracking, a power of a big integer)
    reads no frame, but the signal stops it there. ``dead()``: no byte (the window beats
    every second) for :data:`SILENCE_ENV` seconds (a laptop asleep; sshd's keep-alive is off
    by default)."""

    def __init__(self, conn: int, out: int, kernel: int, kernel_fd: int | None) -> None:
        self.conn, self.out, self.kernel, self.kernel_fd = conn, out, kernel, kernel_fd
        self.pending, self.header, self.body_left = bytearray(), bytearray(), 0
        text = os.environ.get(SILENCE_ENV, "")
        self.limit_s = float(text) if text.replace(".", "", 1).isdigit() else 0.0
        self.last = time.monotonic()
        os.set_blocking(out, False)

    def pump(self) -> bool:
        """Pass on what came (a Stop is not passed on); False at the connection's end."""
        try:
            data = memoryview(os.read(self.conn, 1 << 16))
        except OSError:
            return False
        self.last, i = time.monotonic(), 0
        while i < len(data):
            if self.body_left:
                n = min(self.body_left, len(data) - i)
                self.pending += data[i:i + n]
                i, self.body_left = i + n, self.body_left - n
                continue
            chunk = data[i:i + 4 - len(self.header)]
            self.header += chunk
            i += len(chunk)
            if len(self.header) == 4:
                if self.header == STOP_HEADER:
                    _signal(self.kernel, self.kernel_fd, signal.SIGINT)
                else:
                    self.pending += self.header
                    self.body_left = int.from_bytes(self.header, "big")
                self.header.clear()
        self.flush()
        return len(data) > 0

    def flush(self) -> None:
        """Write what the kernel's stdin takes now (never waiting)."""
        while self.pending:
            try:
                del self.pending[:os.write(self.out, self.pending)]
            except BlockingIOError:
                return
            except OSError:  # the kernel closed its stdin: it is ending
                self.pending.clear()

    def dead(self) -> bool:
        return bool(self.limit_s) and time.monotonic() - self.last > self.limit_s


def _wait(kernel: int, kernel_fd: int | None, ends: list[tuple[int, int]], cap: int,
          still_ours: Callable[[], bool], relay: Relay | None = None) -> str:
    """Sleep until the kernel ends (``"kernel"``), the window does (``"window"``: one of
    ``ends``, ``(fd, poll events)``, is ready, ``still_ours()`` turns False, or ``relay``'s
    connection ends or goes silent) or the kernel passes its cap (``"memory"``, the kernel
    ended); meanwhile pass the window's bytes on to the kernel through ``relay``."""
    poll = select.poll()
    if kernel_fd is not None:
        poll.register(kernel_fd, select.POLLIN)
    for fd, events in ends:
        poll.register(fd, events)
    own = {kernel_fd}
    if relay is not None:
        poll.register(relay.conn, select.POLLIN)
        own |= {relay.conn, relay.out}
    watched, writing = kernel_fd is not None or bool(ends) or relay is not None, False
    next_look = MEMORY_PERIOD_S
    while True:
        period = min(next_look, POLL_S if not ends else MAX_PERIOD_S) if cap else \
            (None if ends else POLL_S)
        period = min(period or 1.0, 1.0) if relay and relay.limit_s else period
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
        if relay is not None:
            if relay.conn in ready and not relay.pump() or relay.dead():
                return "window"
            relay.flush()
            if writing != bool(relay.pending):  # wait for room in the pipe only while needed
                writing = bool(relay.pending)
                poll.register(relay.out, select.POLLOUT) if writing else poll.unregister(relay.out)
        if ready - own or not still_ours():
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
    if events.get("oom_kill", "0") != "0" and cap.isdigit():
        used = _cgroup_file(group, "memory.peak").strip()
        report(used if used.isdigit() else cap, cap)


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
            _signal(pid, None, signal.SIGKILL)
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
        with contextlib.suppress(OSError, ValueError, ImportError):
            import resource

            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        with contextlib.suppress(OSError, ValueError):  # SIGKILL, SIGSTOP: no handler to reset
            signal.signal(sig, signal.SIG_DFL)
        with contextlib.suppress(OSError, ValueError):
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])
            os.kill(os.getpid(), sig)
        os._exit(128 + sig)
    os._exit(os.waitstatus_to_exitcode(status) & 0xFF)


def keep(grace_s: float, pid_fd: int, command: list[str], connection: bool = False) -> None:
    """Above the kernel: start ``command`` as the kernel (a session of its own; its pid
    written to ``pid_fd`` unless that is -1), watch it and the window (this process's
    parent), then sweep and exit as the kernel did. With ``connection`` the window is at the
    other end of this process's stdin (``ssh``), relayed to the kernel's (:class:`Relay`):
    its end ends the kernel too, whatever the kernel's own interpreter is doing."""
    with contextlib.suppress(OSError, AttributeError, ImportError):  # else the kernel alone
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    window = os.getppid()
    os.environ[PARENT_ENV] = str(os.getpid())
    os.environ[KEPT_ENV] = "1"
    kernel_in, relay_out = os.pipe() if connection else (-1, -1)
    kernel = os.fork()
    if kernel == 0:
        try:
            os.setsid()  # before the window hears of it: it signals the kernel's group
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            if pid_fd >= 0:
                os.write(pid_fd, f"{os.getpid()}\n".encode())
                os.close(pid_fd)
            if connection:  # its stdin is the relay's pipe; the connection is this one's
                os.dup2(kernel_in, 0)
            os.execvp(command[0], command)
        finally:
            os._exit(127)
    if pid_fd >= 0:
        os.close(pid_fd)
    kernel_fd, window_fd = _pidfd(kernel), _pidfd(window)
    relay = None
    if connection:
        os.close(kernel_in)
        relay = Relay(os.dup(0), relay_out, kernel, kernel_fd)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):  # the kernel's output is its alone: its end closes it
        os.dup2(devnull, fd)
    os.close(devnull)
    ends = [(window_fd, select.POLLIN)] if window_fd is not None else []
    if os.getppid() != window:  # the window ended before its pidfd was taken
        why = "window"
    else:
        why = _wait(kernel, kernel_fd, ends, memory_cap(), lambda: os.getppid() == window,
                    relay)
    if relay is not None:
        os.close(relay.out)  # the kernel reads the end of its requests: it ends itself
    if why == "window" and not _grace(kernel, kernel_fd, grace_s):
        end_kernel(kernel, kernel_fd)
    _, status = os.waitpid(kernel, 0)
    group = _own_cgroup()
    scope_ran_out(group)
    sweep(group)
    _exit_as(status)


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
