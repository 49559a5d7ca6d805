"""Who a PID is: name, user and command line from psutil, cached per process lifetime.

Qt-free and NVML-free, so the real and the simulated source can both use it. Entries are
keyed by ``psutil.Process`` objects, which compare equal by PID *and* start time: a PID that
the OS reuses for a new program is looked up again, and a process seen before costs one read
of ``/proc/<pid>/stat`` per tick (``create_time()`` would also read the boot time from
``/proc/stat`` on every call, about half the cost).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

import psutil


@dataclass(frozen=True, slots=True)
class ProcInfo:
    """What the OS tells us about a PID. Fields we may not read, or that vanished, are None."""

    pid: int
    name: str | None = None
    user: str | None = None
    command: str | None = None
    exists: bool = True  # False: no such process (exited, or in another PID namespace)

    @property
    def is_self(self) -> bool:
        """True for the process running this code."""
        return self.pid == os.getpid()


def read_procinfo(pid: int) -> ProcInfo:
    """Read one PID from the OS, uncached. Never raises; unreadable fields are None."""
    try:
        proc = psutil.Process(pid)
    except (psutil.NoSuchProcess, ValueError):
        return ProcInfo(pid, exists=False)
    except psutil.Error:
        return ProcInfo(pid)
    return _read(proc)


def _read(proc: psutil.Process) -> ProcInfo:
    values: dict[str, str | None] = {"name": None, "user": None, "command": None}
    exists = True
    with proc.oneshot():
        for key, getter in (("name", proc.name), ("user", proc.username)):
            try:
                values[key] = getter() or None
            except psutil.NoSuchProcess:
                exists = False
            except psutil.Error:  # AccessDenied, ZombieProcess
                pass
        try:
            argv = proc.cmdline()
            values["command"] = " ".join(argv) if argv else None
        except psutil.NoSuchProcess:
            exists = False
        except psutil.Error:
            pass
    return ProcInfo(proc.pid, values["name"], values["user"], values["command"], exists)


class ProcInfoCache:
    """``lookup_many(pids)`` once per tick; forgets PIDs that were not asked for."""

    def __init__(self) -> None:
        self._entries: dict[psutil.Process, ProcInfo] = {}
        self.reads = 0  # full reads done, for tests and benchmarks

    def lookup(self, pid: int) -> ProcInfo:
        """One PID, from the cache when the same process was read before."""
        return self._lookup(pid)[1]

    def lookup_many(self, pids: Iterable[int]) -> dict[int, ProcInfo]:
        """Several PIDs; cache entries not used by this call are dropped."""
        result: dict[int, ProcInfo] = {}
        kept: dict[psutil.Process, ProcInfo] = {}
        for pid in set(pids):
            key, info = self._lookup(pid)
            result[pid] = info
            if key is not None and info.exists:
                kept[key] = info
        self._entries = kept
        return result

    def _lookup(self, pid: int) -> tuple[psutil.Process | None, ProcInfo]:
        try:
            proc = psutil.Process(pid)  # hashed and compared by (pid, start time)
        except (psutil.NoSuchProcess, ValueError):
            return None, ProcInfo(pid, exists=False)
        except psutil.Error:
            return None, ProcInfo(pid)
        cached = self._entries.get(proc)
        if cached is not None:
            return proc, cached
        self.reads += 1
        info = _read(proc)
        if info.exists:
            self._entries[proc] = info
        return proc, info

    def clear(self) -> None:
        self._entries.clear()
