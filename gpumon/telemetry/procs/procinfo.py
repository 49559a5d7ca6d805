"""Who a PID is: name, user and command line from psutil, cached per process lifetime.

Qt-free and NVML-free, so the real and the simulated source can both use it. Each entry keeps
the ``psutil.Process`` it was read from; those compare equal by PID *and* start time, so a PID
that the OS reuses for a new program is read again once the entry is verified.

Verifying costs one read of ``/proc/<pid>/stat`` per PID (~35 us; ``create_time()`` would
also read the boot time from ``/proc/stat``, about half the cost again), so it is not done on
every call: ``lookup_many(pids, verify=False)`` trusts a PID already in the cache without
touching ``/proc``, and only a PID not seen before is read. ``NvmlSource`` verifies on its
slow ticks (``sample(include_slow=True)``, every 5 s at a 1 s interval). The trade-off: a PID
that the OS reuses for another program within one such period, while NVML keeps listing it,
shows the old program's name, user and command until the next slow tick. PIDs not asked for
in a call are dropped, so a PID that leaves NVML's list and comes back is always read again.
A PID that psutil cannot see (no such process here, e.g. NVML reporting host PIDs inside a
container; or no permission) is remembered as such between verifications too, instead of
failing a ``/proc`` look-up on every tick.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

import psutil

from gpumon.telemetry.procs.cgroup_owner import owner_of

#: PIDs that count as "this process" besides our own: the playground kernel, the child that
#: holds gpumon's CUDA contexts. Replaced whole (one assignment) by :func:`set_own_children`.
_own_children: frozenset[int] = frozenset()


def set_own_children(pids: Iterable[int]) -> None:
    """Count ``pids`` (gpumon's own child processes) as this process from now on."""
    global _own_children
    _own_children = frozenset(pids)


@dataclass(frozen=True, slots=True)
class ProcInfo:
    """What the OS tells us about a PID. Fields we may not read, or that vanished, are None."""

    pid: int
    name: str | None = None
    user: str | None = None
    command: str | None = None
    exists: bool = True  # False: no such process (exited, or in another PID namespace)
    container: str | None = None  # its container, batch job or systemd unit (cgroup_owner)

    @property
    def is_self(self) -> bool:
        """True for the process running this code or its playground kernel, also when NVML
        gives its PID as the host sees it and this code runs in a container's PID namespace."""
        return self.pid in self_pids() or self.pid in _own_children


def nspids(status_text: str) -> set[int]:
    """The PIDs of the ``NSpid:`` line of a /proc/<pid>/status text (one per PID namespace
    the process is in, outermost first; nvitop compares NVML's PIDs with them too)."""
    for line in status_text.splitlines():
        if line.startswith("NSpid:"):
            return {int(v) for v in line.split()[1:] if v.isdigit()}
    return set()


_SELF: tuple[int, frozenset[int]] | None = None


def self_pids() -> frozenset[int]:
    """This process's PID in every PID namespace /proc shows; read once per process."""
    global _SELF
    pid = os.getpid()
    if _SELF is None or _SELF[0] != pid:  # a forked child reads its own
        try:
            # /proc/self, not /proc/<getpid()>: in a namespace getpid() is not the PID
            # this /proc knows the process by.
            with open("/proc/self/status", encoding="utf-8", errors="replace") as f:
                found = nspids(f.read())
        except OSError:  # not Linux, or no /proc
            found = set()
        _SELF = (pid, frozenset(found | {pid}))
    return _SELF[1]


MAX_COMMAND_BYTES = 1 << 20  # ARG_MAX is 2 MiB; a table cell needs far less


def printable(text: str) -> str:
    """Text psutil read from /proc, made valid UTF-8: bytes that were not (kept by Python
    as surrogate escapes) become U+FFFD, which Qt, the CSV writer and a terminal accept."""
    return text.encode("utf-8", errors="surrogateescape").decode("utf-8", errors="replace")


def command_line(proc: psutil.Process) -> str | None:
    """The process's arguments joined by spaces, every character as the process has it.

    psutil reads ``/proc/<pid>/cmdline`` as text with universal newlines, so an argument's
    carriage return came back as a line feed (and CR LF as one LF), and the escaped command
    line said ``\\n`` where the process had ``\\r``. Where psutil's answer holds a line
    feed, the file is read again here as bytes (Linux); psutil still decides whether the
    process can be read at all (its exceptions: gone, not ours)."""
    argv = proc.cmdline()
    if not argv:
        return None
    text = " ".join(argv)
    if "\n" in text:
        text = _raw_command_line(proc.pid) or text
    return printable(text)


def _raw_command_line(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            data = f.read(MAX_COMMAND_BYTES)
    except OSError:  # not Linux, gone meanwhile, not readable: psutil's text it is
        return None
    return data.rstrip(b"\0").replace(b"\0", b" ").decode("utf-8", "surrogateescape") or None


def _read(proc: psutil.Process) -> ProcInfo:
    """What the OS says of ``proc``; never raises, unreadable fields are None."""
    values: dict[str, str | None] = {"name": None, "user": None, "command": None}
    exists = True
    with proc.oneshot():
        for key, getter in (("name", proc.name), ("user", proc.username)):
            try:
                values[key] = printable(getter()) or None
            except psutil.NoSuchProcess:
                exists = False
            except psutil.Error:  # AccessDenied, ZombieProcess
                pass
        try:
            values["command"] = command_line(proc)
        except psutil.NoSuchProcess:
            exists = False
        except psutil.Error:
            pass
    return ProcInfo(proc.pid, values["name"], values["user"], values["command"], exists,
                    container_of(proc.pid) if exists else None)


def container_of(pid: int) -> str | None:
    """The label of the container, job or unit ``/proc/<pid>/cgroup`` names; None when there
    is none or the file cannot be read (not Linux, gone). Read once per process lifetime."""
    try:
        with open(f"/proc/{pid}/cgroup", encoding="utf-8", errors="replace") as f:
            text = f.read(65536)  # a few hundred bytes in practice; capped all the same
    except OSError:
        return None
    owner = owner_of(text)
    return None if owner is None else printable(owner.label)


@dataclass(frozen=True, slots=True)
class HostUsage:
    """A process's use of the host: CPU (percent of one core, since the last reading; None on
    the first), resident memory, and its start as ``time.time()``."""

    cpu_pct: float | None
    rss_bytes: int | None
    started_s: float | None


class ProcInfoCache:
    """``lookup_many(pids, verify)`` once per tick; forgets PIDs that were not asked for."""

    def __init__(self) -> None:
        # pid -> (the process read, or None when psutil could not see it; what we know)
        self._entries: dict[int, tuple[psutil.Process | None, ProcInfo]] = {}
        self.reads = 0  # full reads done, for tests and benchmarks
        self._cpu_since: set[psutil.Process] = set()  # processes with a CPU reading to diff

    def usage(self, pids: Iterable[int]) -> dict[int, HostUsage]:
        """CPU, RSS and start time of the cached processes among ``pids`` (one read of
        /proc/<pid>/stat and statm each); a process gone meanwhile is left out."""
        found: dict[int, HostUsage] = {}
        primed: set[psutil.Process] = set()
        for pid in set(pids):
            entry = self._entries.get(pid)
            proc = entry[0] if entry is not None else None
            if proc is None:
                continue
            try:
                with proc.oneshot():
                    cpu = proc.cpu_percent(None)  # since this object's previous call
                    rss = int(proc.memory_info().rss)
                    started = proc.create_time()  # read when the entry was made: no I/O
            except psutil.Error:  # exited or no permission since the last tick
                continue
            found[pid] = HostUsage(cpu if proc in self._cpu_since else None, rss, started)
            primed.add(proc)
        self._cpu_since = primed
        return found

    def lookup(self, pid: int, verify: bool = True) -> ProcInfo:
        """One PID, from the cache when the same process was read before; keeps other entries.

        ``verify=False`` trusts a cached PID without checking that it is still the same
        process (see the module docstring); a PID not in the cache is always read.
        """
        entry, info = self._lookup(pid, verify)
        if entry is not None:
            self._entries[pid] = entry
        else:
            self._entries.pop(pid, None)
        return info

    def lookup_many(self, pids: Iterable[int], verify: bool = True) -> dict[int, ProcInfo]:
        """Several PIDs; cache entries not used by this call are dropped."""
        result: dict[int, ProcInfo] = {}
        kept: dict[int, tuple[psutil.Process | None, ProcInfo]] = {}
        for pid in set(pids):
            entry, result[pid] = self._lookup(pid, verify)
            if entry is not None:
                kept[pid] = entry
        self._entries = kept
        return result

    def _lookup(self, pid: int, verify: bool
                ) -> tuple[tuple[psutil.Process | None, ProcInfo] | None, ProcInfo]:
        """(the entry to keep, or None, and the info) for one PID."""
        cached = self._entries.get(pid)
        if cached is not None and not verify:
            return cached, cached[1]  # trusted: no /proc access
        try:
            proc = psutil.Process(pid)  # reads the start time: /proc/<pid>/stat
        except (psutil.NoSuchProcess, ValueError):
            info = ProcInfo(pid, exists=False)
            return (None, info), info
        except psutil.Error:
            info = ProcInfo(pid)
            return (None, info), info
        if cached is not None and cached[0] == proc:  # same PID and start time
            return cached, cached[1]
        self.reads += 1
        info = _read(proc)
        return ((proc, info) if info.exists else None), info

    def clear(self) -> None:
        self._entries.clear()
