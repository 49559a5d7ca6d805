"""Fixed-size ring buffers of GPU metrics over time, one set per GPU.

Memory is allocated per GPU and per series when the series first appears, for the points held
so far: it doubles as they come, up to the capacity (an hour at 1 s: 3,601 points, ~1 MiB a
GPU for its 37 series), then never grows again. Preallocated at full capacity, 8 GPUs held
8.3 MiB from the first reading on, a fifth of what a monitor-only window holds beyond a bare
Qt window (issue 52). Values are float64; ``NaN`` stands for "not reported"
(None, a lost GPU, or a series absent from that tick). The GUI thread owns a History;
it is not thread-safe.

Beside each GPU's ring, the processes on that GPU (``process_history.py``): their GPU
memory, SM %, host CPU % and RSS at the same slots, at most ``MAX_PROCESSES`` rows a GPU,
read with ``processes``, ``process_series`` and ``process_memory``; ``keys`` and ``series``
stay the GPU's own.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from gpumon.telemetry.history.process_history import (
    FIELDS,
    MAX_PROCESSES,
    ProcessEntry,
    ProcessRing,
)
from gpumon.telemetry.model.metrics import HISTORY_KEYS, SELF_MEM_KEY, TIME_KEY, value_of
from gpumon.telemetry.model.types import GpuProcess, Snapshot

__all__ = ["MAX_PROCESSES", "History", "ProcessEntry", "ProcessMemory", "capacity_for"]

WINDOW_CHOICES_S: tuple[int, ...] = (60, 300, 900, 1800, 3600)  # 1 minute to 1 hour
MAX_CAPACITY = 36_000  # one hour at 10 samples per second


def capacity_for(window_s: float, interval_s: float) -> int:
    """Points needed to hold ``window_s`` seconds sampled every ``interval_s``, capped."""
    if not (interval_s > 0 and math.isfinite(interval_s)):
        raise ValueError(f"interval_s must be a positive number, got {interval_s}")
    if not (window_s > 0 and math.isfinite(window_s)):
        raise ValueError(f"window_s must be a positive number, got {window_s}")
    return max(2, min(MAX_CAPACITY, math.ceil(window_s / interval_s) + 1))


FIRST_SLOTS = 64  # a ring's first allocation; it doubles up to its capacity


class _Ring:
    """The buffers of one GPU: a time column and one value column per series.

    The columns hold ``len(times)`` slots, fewer than ``capacity`` until the ring has been
    filled once: slots are used in order from 0 until then, so growing keeps every slot
    where it is (the process ring beside it is indexed by the same slots)."""

    def __init__(self, capacity: int, slots: int = FIRST_SLOTS) -> None:
        self._capacity = int(capacity)
        self.times = np.full(min(self._capacity, max(1, slots)), np.nan)
        self.values: dict[str, np.ndarray] = {}
        self.head = 0  # slot the next point goes into
        self.count = 0

    @property
    def capacity(self) -> int:
        return self._capacity

    def _make_room(self) -> None:
        """Twice the slots (at most ``capacity``) when the next point has none yet."""
        held = len(self.times)
        if self.head < held:
            return
        slots = min(self._capacity, 2 * held)
        self.times = _grown(self.times, slots)
        self.values = {key: _grown(column, slots) for key, column in self.values.items()}

    def order(self) -> np.ndarray:
        """Physical slot indices in chronological order."""
        start = (self.head - self.count) % self.capacity
        return (start + np.arange(self.count)) % self.capacity

    def append(self, t: float, row: dict[str, float]) -> None:
        self._make_room()
        slot = self.head
        self.times[slot] = t
        for key in row:
            if key not in self.values:
                self.values[key] = np.full(len(self.times), np.nan)
        for key, column in self.values.items():
            column[slot] = row.get(key, math.nan)
        self.head = (slot + 1) % self.capacity
        self.count = min(self.count + 1, self.capacity)

    def resized(self, capacity: int) -> _Ring:
        """A new ring of ``capacity`` slots holding the newest points of this one."""
        keep = self.order()[max(0, self.count - capacity):]
        n = len(keep)
        new = _Ring(capacity, slots=max(FIRST_SLOTS, n))
        new.times[:n] = self.times[keep]
        for key, column in self.values.items():
            new.values[key] = np.full(len(new.times), np.nan)
            new.values[key][:n] = column[keep]
        new.head = n % capacity
        new.count = n
        return new

    @property
    def nbytes(self) -> int:
        return int(self.times.nbytes + sum(c.nbytes for c in self.values.values()))


def _grown(column: np.ndarray, slots: int) -> np.ndarray:
    """``column`` in ``slots`` slots, the new ones NaN."""
    grown = np.full(slots, np.nan)
    grown[:len(column)] = column
    return grown


@dataclass(frozen=True)
class ProcessMemory:
    """A GPU's used memory and each process's, at the same times (copies, oldest first).

    ``processes``: (who, bytes or NaN at each time) of every process kept for the GPU;
    ``others``: the memory of processes beyond the cap (NaN where there was none)."""

    times: np.ndarray
    used: np.ndarray
    processes: tuple[tuple[ProcessEntry, np.ndarray], ...]
    others: np.ndarray


class History:
    """Per-GPU ring buffers fed by Snapshots; see the module docstring."""

    def __init__(self, capacity: int) -> None:
        self._capacity = self._checked(capacity)
        self._rings: dict[int, _Ring] = {}
        self._procs: dict[int, ProcessRing] = {}  # made when a GPU first lists a process

    @staticmethod
    def _checked(capacity: int) -> int:
        if capacity < 2:
            raise ValueError(f"capacity must be at least 2, got {capacity}")
        return int(capacity)

    @property
    def capacity(self) -> int:
        return self._capacity

    def append(self, snapshot: Snapshot) -> None:
        """Record one point per GPU sample: every HISTORY_KEYS metric, the memory this
        process holds (``self_mem_bytes``) and the snapshot's extra series for that GPU;
        and each process listed on that GPU."""
        listed: dict[int, list[GpuProcess]] = {}
        for p in snapshot.processes:
            listed.setdefault(p.gpu_index, []).append(p)
        for sample in snapshot.samples:
            row = {key: _nan_if_none(value_of(sample, key)) for key in HISTORY_KEYS}
            own = [p.gpu_mem_bytes for p in snapshot.processes
                   if p.is_self and p.gpu_index == sample.index and p.gpu_mem_bytes is not None]
            row[SELF_MEM_KEY] = float(sum(own)) if own else math.nan
            for key, value in snapshot.extra.get(sample.index, {}).items():
                row[key] = _nan_if_none(value)
            ring = self._rings.get(sample.index)
            if ring is None:
                ring = self._rings[sample.index] = _Ring(self._capacity)
            ring.append(sample.timestamp_s, row)
            procs = self._procs.get(sample.index)
            if procs is None and sample.index in listed:
                procs = self._procs[sample.index] = ProcessRing(self._capacity)
            if procs is not None:
                procs.write((ring.head - 1) % ring.capacity, listed.get(sample.index, ()))

    def series(
        self, gpu_index: int, key: str, since: float | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(times, values) of one series, oldest first, as new arrays (copies: safe to keep).

        ``since`` keeps only points at or after that time. An unknown GPU gives two empty
        arrays; a key this GPU never had gives its times with all-NaN values.
        """
        ring = self._rings.get(gpu_index)
        if ring is None:
            return np.empty(0), np.empty(0)
        order = ring.order()
        times = ring.times[order]
        column = ring.values.get(key)
        values = column[order] if column is not None else np.full(len(order), np.nan)
        if since is not None:
            keep = times >= since
            return times[keep], values[keep]
        return times, values

    def processes(self, gpu_index: int) -> list[ProcessEntry]:
        """The processes kept for a GPU (each with points in its ring), in no set order."""
        procs = self._procs.get(gpu_index)
        return [] if procs is None else [e for _, e in procs.rows()]

    def process_series(self, gpu_index: int, pid: int, key: str, since: float | None = None,
                       started_s: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(times, values) of one process's ``key`` (one of ``process_history.FIELDS``) on a
        GPU, NaN where it was not listed; the newest program with ``pid`` (and that start
        time, when given). Two empty arrays when it is not kept for this GPU."""
        if key not in FIELDS:
            raise KeyError(f"no per-process series {key!r}; expected one of {FIELDS}")
        procs = self._procs.get(gpu_index)
        row = None if procs is None else procs.row_of(pid, started_s)
        ring = self._rings.get(gpu_index)
        if procs is None or row is None or ring is None:
            return np.empty(0), np.empty(0)
        order = ring.order()
        times = ring.times[order]
        values = procs.data[order, FIELDS.index(key), row].astype(float)
        if since is not None:
            keep = times >= since
            return times[keep], values[keep]
        return times, values

    def process_memory(self, gpu_index: int, since: float | None = None) -> ProcessMemory:
        """Used memory and the memory of every process kept for a GPU, at or after ``since``
        (what a stacked graph of memory by process draws)."""
        procs = self._procs.get(gpu_index)
        ring = self._rings.get(gpu_index)
        if procs is None or ring is None:
            times, used = self.series(gpu_index, "mem_used_bytes", since)
            return ProcessMemory(times, used, (), np.full(len(times), np.nan))
        order = ring.order()
        if since is not None:
            order = order[ring.times[order] >= since]
        column = ring.values.get("mem_used_bytes")
        rows = tuple((ProcessEntry(e.pid, e.started_s, e.name, e.last_seen),
                      procs.data[order, 0, r].astype(float)) for r, e in procs.rows())
        return ProcessMemory(ring.times[order],
                             np.full(len(order), np.nan) if column is None else column[order],
                             rows, procs.others[order].astype(float))

    def keys(self, gpu_index: int) -> list[str]:
        """The series recorded for a GPU, HISTORY_KEYS first; empty for an unknown GPU."""
        ring = self._rings.get(gpu_index)
        return [] if ring is None else list(ring.values)

    def gpu_indices(self) -> list[int]:
        return sorted(self._rings)

    def count(self, gpu_index: int) -> int:
        """How many points are held for a GPU (at most ``capacity``)."""
        ring = self._rings.get(gpu_index)
        return 0 if ring is None else ring.count

    def latest_time(self) -> float | None:
        """Timestamp of the newest point of any GPU, None when empty."""
        latest = [float(r.times[(r.head - 1) % r.capacity]) for r in self._rings.values()
                  if r.count]
        return max(latest) if latest else None

    def value_at(self, gpu_index: int, t: float) -> dict[str, float]:
        """Every series of a GPU at the newest point at or before ``t``, for a hover readout.

        The point's own time is under ``"timestamp_s"``. Empty when there is no such point.
        """
        ring = self._rings.get(gpu_index)
        if ring is None or ring.count == 0:
            return {}
        order = ring.order()
        i = int(np.searchsorted(ring.times[order], t, side="right")) - 1
        if i < 0:
            return {}
        slot = order[i]
        result = {TIME_KEY: float(ring.times[slot])}
        result.update({key: float(column[slot]) for key, column in ring.values.items()})
        return result

    def resize(self, capacity: int) -> None:
        """Change the capacity, keeping the newest points that fit."""
        self._capacity = self._checked(capacity)
        self._procs = {i: p.resized(self._kept(i), self._capacity)
                       for i, p in self._procs.items() if i in self._rings}
        self._rings = {i: r.resized(self._capacity) for i, r in self._rings.items()}

    def _kept(self, gpu_index: int) -> np.ndarray:
        """The slots of a GPU's ring that a resize to the current capacity keeps."""
        ring = self._rings[gpu_index]
        return ring.order()[max(0, ring.count - self._capacity):]

    def clear(self) -> None:
        """Forget every GPU, series, process and point."""
        self._rings.clear()
        self._procs.clear()

    @property
    def nbytes(self) -> int:
        """Bytes held by the buffers; grows with the points held until the capacity is
        reached, then only when a new GPU or series appears, or more processes than ever
        before on a GPU (up to MAX_PROCESSES)."""
        return (sum(r.nbytes for r in self._rings.values())
                + sum(p.nbytes for p in self._procs.values()))


def _nan_if_none(value: float | None) -> float:
    return math.nan if value is None else float(value)
