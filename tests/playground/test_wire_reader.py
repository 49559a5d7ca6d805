"""The window's frame reader sleeps until the kernel writes or ends: no wakeups while an idle
kernel says nothing (it woke every 0.2 s to ask whether the kernel still ran), and the
kernel's end is still noticed while a process it started holds the pipe open."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from gpumon.playground.data.wire import FrameReader, ProtocolError, encode_frame

pytestmark = pytest.mark.skipif(not hasattr(os, "pidfd_open") or
                                not Path("/proc/self/task").is_dir(),
                                reason="pidfds and /proc are Linux's")


def _switches(native_id: int) -> int:
    """Context switches of this process's thread ``native_id`` so far."""
    status = Path(f"/proc/self/task/{native_id}/status").read_text()
    return sum(int(line.split()[1]) for line in status.splitlines() if "ctxt_switches:" in line)


class _Reading:
    """A thread reading frames from a pipe whose writing end the test holds, written for
    the process ``proc``."""

    def __init__(self, proc: subprocess.Popen[bytes], rest_within_s: float | None = None):
        read_fd, self.write_fd = os.pipe()
        self.stream = os.fdopen(read_fd, "rb", buffering=0)
        self.reader = FrameReader(self.stream, alive=lambda: proc.poll() is None,
                                  rest_within_s=rest_within_s, pid=proc.pid)
        self.got: list[object] = []
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        while self.thread.native_id is None:
            time.sleep(0.01)

    def _run(self) -> None:
        try:
            while True:
                self.got.append(self.reader.read())
        except (EOFError, ProtocolError) as exc:
            self.got.append(exc)
        finally:
            self.reader.close()

    def close(self) -> None:
        os.close(self.write_fd)
        self.thread.join(5)
        self.stream.close()


@pytest.fixture
def sleeper():
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield proc
    proc.kill()
    proc.wait()


def test_the_reader_sleeps_while_the_kernel_is_quiet_and_notices_its_end(sleeper) -> None:
    reading = _Reading(sleeper)
    try:
        os.write(reading.write_fd, encode_frame("hello"))
        deadline = time.monotonic() + 5
        while not reading.got and time.monotonic() < deadline:
            time.sleep(0.01)
        assert reading.got == ["hello"]
        native_id = reading.thread.native_id
        assert native_id is not None
        before = _switches(native_id)
        time.sleep(1.2)
        assert _switches(native_id) - before <= 2  # polling every 0.2 s: 6 or more
        sleeper.kill()  # the pipe stays open (the test holds it, as a kernel's child would)
        reading.thread.join(2.0)
        assert not reading.thread.is_alive()
        assert isinstance(reading.got[-1], EOFError)
    finally:
        reading.close()


def test_a_frame_that_stops_half_way_is_still_refused_in_time(sleeper) -> None:
    reading = _Reading(sleeper, rest_within_s=0.3)
    try:
        os.write(reading.write_fd, encode_frame("x" * 100)[:20])
        reading.thread.join(3.0)
        assert not reading.thread.is_alive()
        assert isinstance(reading.got[-1], ProtocolError)
    finally:
        reading.close()
