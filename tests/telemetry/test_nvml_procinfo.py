"""procinfo: who a PID is, read through psutil and cached per process lifetime."""

from __future__ import annotations

import getpass
import os
import subprocess
import sys

import psutil
import pytest

from gpumon.telemetry.procinfo import ProcInfoCache, read_procinfo


def vanished_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_self_is_read() -> None:
    info = read_procinfo(os.getpid())
    assert info.exists and info.is_self
    assert info.user == getpass.getuser()
    assert info.name and info.command and "pytest" in info.command


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


def test_reused_pid_is_read_again(monkeypatch: pytest.MonkeyPatch) -> None:
    cache = ProcInfoCache()
    cache.lookup(os.getpid())
    cache.lookup(os.getpid())
    assert cache.reads == 1  # the same process: from the cache
    # The same PID with another start time is another process (psutil compares both).
    real = psutil._psplatform.Process.create_time
    monkeypatch.setattr(psutil._psplatform.Process, "create_time",
                        lambda self, *a, **k: real(self, *a, **k) + 1.0)
    cache.lookup(os.getpid())
    assert cache.reads == 2
