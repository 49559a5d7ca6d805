"""A message collector for KernelClient tests (wait for a kind of message, with a timeout),
the kernel-client fixtures the playground tests and tests/gpu share (no Qt here), and a way
to know that typed code runs in the kernel now (``touch_line`` and ``wait_for_file``)."""

from __future__ import annotations

import queue
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from testkit import wait_until

from gpumon.playground.client.kernel_client import KernelClient
from gpumon.playground.data.wire import Message
from gpumon.playground.lesson.checkpoint_path import remove_folders_of


class Inbox:
    """Collects the client's messages (reader thread) for the test thread to wait on."""

    def __init__(self) -> None:
        self._queue: queue.Queue[Message] = queue.Queue()
        self.seen: list[Message] = []

    def __call__(self, message: Message) -> None:
        self._queue.put(message)

    def wait(self, kind: str, rid: int | None = None, timeout: float = 30.0) -> Message:
        """The first message of ``kind`` (for request ``rid`` if given); fails on timeout."""
        for m in self.seen:
            if m.kind == kind and (rid is None or m.id == rid):
                self.seen.remove(m)
                return m
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {kind!r} message within {timeout} s; saw "
                                     f"{[m.kind for m in self.seen]}")
            try:
                m = self._queue.get(timeout=left)
            except queue.Empty:
                continue
            if m.kind == kind and (rid is None or m.id == rid):
                return m
            self.seen.append(m)


@pytest.fixture
def inbox() -> Inbox:
    return Inbox()


@pytest.fixture
def client(inbox: Inbox, kernel_fork_server: None) -> Iterator[KernelClient]:
    """A kernel client; afterwards its kernel has exited and no process is left behind."""
    c = KernelClient(inbox)
    yield c
    assert c.shutdown(timeout_s=1.0) is not None or c.process is None
    proc = c.process
    assert proc is None or proc.poll() is not None
    if proc is not None:  # the window's KernelLink does this when its kernel ends
        remove_folders_of(proc.pid)


def touch_line(mark: Path) -> str:
    """A line of code that creates ``mark``. Put before a statement that runs for long, it
    tells the test that the kernel runs that code now (``wait_for_file``), instead of a
    guess of how long the kernel takes to get there."""
    return f"__import__('pathlib').Path({str(mark)!r}).touch()\n"


def wait_for_file(path: Path, timeout_s: float = 60.0) -> None:
    """Wait until ``path`` exists (a kernel that imports torch first takes seconds)."""
    wait_until(path.exists, timeout_s, f"{path.name} to be created")
