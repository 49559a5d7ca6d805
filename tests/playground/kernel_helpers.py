"""A message collector for KernelClient tests: wait for a kind of message, with a timeout."""

from __future__ import annotations

import queue
import time

from gpumon.playground.wire import Message


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
