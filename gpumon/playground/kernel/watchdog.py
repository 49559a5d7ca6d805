"""The kernel's watchdog (Linux): a tiny process that ends the kernel when its window is gone
and the kernel did not end itself.

The kernel's own ways to end with its window (``lifeline.py``: the parent-death signal's
Python handler, the lifeline thread) need its interpreter, and user code that holds the GIL
inside one C call (``x = sum(range(10**11))``) keeps both from running: such a kernel was
still running 8 s after its window was SIGKILLed. This process has an interpreter of its own.

Run by the kernel as ``python -I -S watchdog.py WINDOW KERNEL GRACE_S`` in a session of its own
(the window's interrupts and group kills are the kernel's, not its), it imports only the
standard library (no gpumon, no torch: about 9 MB), sleeps on pidfds of the window (the
kernel's parent) and of the kernel, and when the window ends first gives the kernel
``GRACE_S`` to end itself (flushing the user's files, ending its children); then it SIGKILLs
the kernel and every process below it. It exits as soon as the kernel has ended.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import time

#: How often it looks where there are no pidfds (Linux before 5.3).
POLL_S = 0.25


def _parent_of(pid: int) -> int | None:
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
            parent = _parent_of(int(name))
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


def watch(window: int, kernel: int, grace_s: float) -> None:
    kernel_fd, window_fd = _pidfd(kernel), _pidfd(window)
    if kernel_fd is not None and window_fd is not None:
        poll = select.poll()
        poll.register(kernel_fd, select.POLLIN)
        poll.register(window_fd, select.POLLIN)
        # the window's pidfd is its own only while it is still the kernel's parent
        if _parent_of(kernel) == window:
            while not poll.poll():
                pass
        if _parent_of(kernel) is None:
            return  # the kernel ended: nothing to watch
        poll.unregister(window_fd)
        if poll.poll(round(grace_s * 1000)):
            return  # it ended itself in time
    else:
        while _parent_of(kernel) == window:
            time.sleep(POLL_S)
        deadline = time.monotonic() + grace_s
        while _parent_of(kernel) is not None and time.monotonic() < deadline:
            time.sleep(POLL_S / 5)
        if _parent_of(kernel) is None:
            return
    end_kernel(kernel, kernel_fd)


def main(argv: list[str]) -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's Ctrl+C is the window's
    try:
        window, kernel, grace_s = int(argv[1]), int(argv[2]), float(argv[3])
    except (IndexError, ValueError):
        return 2
    watch(window, kernel, grace_s)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
