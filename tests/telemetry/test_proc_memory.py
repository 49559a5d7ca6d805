"""RssProbe: a process's resident memory, read on a thread of its own."""

from __future__ import annotations

import mmap
import os
import time

import pytest

np = pytest.importorskip("numpy", reason="numpy is not installed (the CPU view's memory "
                                          "line needs it)")

from gpumon.telemetry.procs.rss import RssProbe, rss_of  # noqa: E402


def test_reads_a_live_process_and_nothing_for_a_missing_one() -> None:
    assert (rss_of(os.getpid()) or 0) > 1_000_000
    assert rss_of(None) is None
    assert rss_of(2**22 + 12345) is None  # beyond Linux's pid_max default


def test_the_thread_reads_until_stopped_and_the_ring_is_bounded() -> None:
    values = iter(range(10**6))
    probe = RssProbe(lambda: 1, interval_s=0.01, max_points=5,
                     read=lambda _pid: next(values))
    probe.start()
    deadline = time.monotonic() + 5
    while len(probe.series()[0]) < 5 and time.monotonic() < deadline:
        time.sleep(0.01)
    probe.stop()
    assert not probe.running
    t, v = probe.series()
    assert len(t) == 5 and np.all(np.diff(v) == 1) and np.all(np.diff(t) >= 0)
    assert len(probe.series(since=t[-1])[0]) == 1


def test_a_growing_process_is_seen_growing() -> None:
    probe = RssProbe(os.getpid)
    probe.read_once()
    # 64 MiB of fresh pages, each written, mapped here: no allocator can hand back memory
    # that is resident already. An np.ones of 64 MiB left RSS equal to the byte now and then
    # in a loaded test worker (cause not found; reused resident heap would explain it).
    size = 64 * 2**20
    block = mmap.mmap(-1, size)
    for offset in range(0, size, mmap.PAGESIZE):
        block[offset] = 1
    probe.read_once()
    _, v = probe.series()
    block.close()
    assert v[-1] - v[0] > 50 * 2**20
