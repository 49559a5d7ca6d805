"""procinfo: who a PID is, read through psutil and cached per process lifetime."""

from __future__ import annotations

import getpass
import os
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
from testkit import vanished_pid

from gpumon.telemetry.procs.procinfo import ProcInfoCache, read_procinfo


class CountingProcess(psutil.Process):
    """psutil.Process that counts constructions (each one reads /proc/<pid>/stat)."""

    made: list[int | None] = []

    def __init__(self, pid: int | None = None) -> None:
        CountingProcess.made.append(pid)
        super().__init__(pid)


class RebornProcess(CountingProcess):
    """A psutil.Process whose start time moves on with ``generation``: after
    ``reuse_pids()``, a PID names another process, as when the OS reuses it. Only psutil's
    public API (subclass, ``pid``, ``create_time``) is involved."""

    generation = 0

    def __init__(self, pid: int | None = None) -> None:
        super().__init__(pid)
        self.born_in = RebornProcess.generation

    def create_time(self) -> float:
        return super().create_time() + self.born_in

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, psutil.Process) and self.pid == other.pid
                and self.create_time() == other.create_time())

    __hash__ = psutil.Process.__hash__


def reuse_pids() -> None:
    RebornProcess.generation += 1


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> list[int | None]:
    """PIDs for which procinfo constructed a psutil.Process, in order."""
    CountingProcess.made = []
    RebornProcess.generation = 0
    monkeypatch.setattr("gpumon.telemetry.procs.procinfo.psutil.Process", RebornProcess)
    return CountingProcess.made


def test_self_is_read() -> None:
    info = read_procinfo(os.getpid())
    assert info.exists and info.is_self
    assert info.user == getpass.getuser()
    # The first word of the command line as the kernel has it (under pytest-xdist a worker
    # is "python -c ...", so the word "pytest" need not appear).
    argv0 = Path("/proc/self/cmdline").read_bytes().split(b"\0")[0].decode()
    assert info.name and info.command.split()[0] == argv0


def test_vanished_pid_has_no_details() -> None:
    info = read_procinfo(vanished_pid())
    assert not info.exists and not info.is_self
    assert (info.name, info.user, info.command) == (None, None, None)


def test_access_denied_keeps_what_is_known(monkeypatch: pytest.MonkeyPatch) -> None:
    def denied(self: psutil.Process) -> list[str]:
        raise psutil.AccessDenied(self.pid)
    monkeypatch.setattr(psutil.Process, "cmdline", denied)
    info = read_procinfo(os.getpid())
    assert info.exists and info.command is None and info.name and info.user


def test_cache_reads_each_process_once_and_forgets_unseen_ones() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        cache = ProcInfoCache()
        first = cache.lookup_many([os.getpid(), child.pid])
        assert cache.reads == 2 and first[child.pid].exists
        again = cache.lookup_many([os.getpid(), child.pid])
        assert cache.reads == 2 and again == first
        cache.lookup_many([os.getpid()])  # the child is forgotten ...
        cache.lookup_many([os.getpid(), child.pid])  # ... and read again
        assert cache.reads == 3
    finally:
        child.kill()
        child.wait()
    assert not cache.lookup(child.pid).exists


def test_reused_pid_is_read_again(made: list[int | None]) -> None:
    cache = ProcInfoCache()
    cache.lookup(os.getpid())
    cache.lookup(os.getpid())
    assert cache.reads == 1  # the same process: from the cache
    reuse_pids()  # the same PID with another start time is another process
    cache.lookup(os.getpid())
    assert cache.reads == 2


def test_unverified_lookup_trusts_a_cached_pid_without_touching_proc(
        made: list[int | None]) -> None:
    cache = ProcInfoCache()
    first = cache.lookup_many([os.getpid()])
    assert made == [os.getpid()] and cache.reads == 1
    made.clear()
    for _ in range(3):
        assert cache.lookup_many([os.getpid()], verify=False) == first
    assert made == [] and cache.reads == 1
    assert cache.lookup(os.getpid(), verify=False) == first[os.getpid()]
    assert made == []


def test_unverified_lookup_always_reads_a_new_pid(made: list[int | None]) -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        cache = ProcInfoCache()
        cache.lookup_many([os.getpid()], verify=False)  # empty cache: read all the same
        assert made == [os.getpid()] and cache.reads == 1
        infos = cache.lookup_many([os.getpid(), child.pid], verify=False)
        assert made == [os.getpid(), child.pid] and cache.reads == 2
        assert infos[child.pid].exists and not infos[child.pid].is_self
        cache.lookup_many([os.getpid()], verify=False)  # the child is dropped ...
        cache.lookup_many([os.getpid(), child.pid], verify=False)  # ... and read again
        assert made == [os.getpid(), child.pid, child.pid] and cache.reads == 3
    finally:
        child.kill()
        child.wait()


def test_verified_lookup_reads_a_pid_whose_process_changed(made: list[int | None]) -> None:
    cache = ProcInfoCache()
    me = os.getpid()
    cache.lookup_many([me])
    cache.lookup_many([me], verify=True)
    assert cache.reads == 1 and made == [me, me]  # verified, same process: from the cache
    reuse_pids()  # the OS "reuses" the PID: same PID, another start time
    cache.lookup_many([me], verify=False)
    assert cache.reads == 1 and made == [me, me]  # the documented trade-off: not noticed
    cache.lookup_many([me], verify=True)
    assert cache.reads == 2 and made == [me, me, me]  # noticed on the next verified call
    cache.lookup_many([me], verify=True)
    assert cache.reads == 2  # and the new process is cached from then on


def test_a_pid_psutil_cannot_see_is_not_looked_up_again_until_verified(
        made: list[int | None]) -> None:
    cache = ProcInfoCache()
    gone = vanished_pid()
    made.clear()
    first = cache.lookup_many([gone], verify=True)
    assert not first[gone].exists and made == [gone]
    for _ in range(3):  # ordinary ticks: what is known is trusted, no /proc look-up
        assert cache.lookup_many([gone], verify=False) == first
    assert made == [gone]
    cache.lookup_many([gone], verify=True)  # a slow tick looks again
    assert made == [gone, gone]
