"""Per-process series of one GPU, in slots aligned with that GPU's ring in the History.

Each process on the GPU gets a row (a PID, told apart from a later program given the same
PID by its start time) holding its GPU memory, SM %, host CPU % and host RSS at every slot
of the GPU's ring: NaN where it was not listed. Rows are float32 (a byte count of up to 2^24
MiB is exact) and grow 4 at a time as processes come, never past ``MAX_PROCESSES``, so the
memory is bounded by capacity × rows whatever runs. A row frees itself once the process has
been gone for a whole ring (its points all overwritten): a process that ends drops out as
the window of time passes.

Beyond the cap (a fork bomb of short processes): a new process takes the row of the process
gone longest, whose memory is first added into the GPU's ``others`` column, so the totals
over time stay whole and only that process's name is lost; while all ``MAX_PROCESSES`` rows
are held by processes listed right now, a further process's memory goes into ``others`` for
that tick. Qt-free; not thread-safe (the History's owner, the GUI thread, uses it).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from gpumon.telemetry.model.types import GpuProcess

MAX_PROCESSES = 16  # rows per GPU; see the module docstring for what happens beyond
FIELDS: tuple[str, ...] = ("gpu_mem_bytes", "sm_util_pct", "cpu_pct", "host_rss_bytes")
_ROWS_STEP = 4  # rows are added 4 at a time


@dataclass
class ProcessEntry:
    """Who a row belongs to. ``name`` is untrusted text (a command's name), kept raw."""

    pid: int
    started_s: float | None
    name: str | None
    last_seen: int  # the ring's append count when it was last listed

    def same_program(self, started_s: float | None) -> bool:
        return started_s is None or self.started_s is None or started_s == self.started_s


def _values(p: GpuProcess) -> tuple[float, float, float, float]:
    """``p``'s readings in the order of FIELDS, NaN for None (spelt out: this runs for every
    process at every tick)."""
    mem, sm, cpu, rss = p.gpu_mem_bytes, p.sm_util_pct, p.cpu_pct, p.host_rss_bytes
    return (math.nan if mem is None else float(mem), math.nan if sm is None else float(sm),
            math.nan if cpu is None else float(cpu), math.nan if rss is None else float(rss))


class ProcessRing:
    """The rows of one GPU; ``write`` after each point the GPU's ring appends."""

    def __init__(self, capacity: int, max_rows: int = MAX_PROCESSES) -> None:
        self.capacity = int(capacity)
        self.max_rows = int(max_rows)
        # slot, field, row: one tick's writes are one contiguous block
        self.data = np.full((self.capacity, len(FIELDS), 0), np.nan, dtype=np.float32)
        self.others = np.full(self.capacity, np.nan, dtype=np.float32)
        self.entries: list[ProcessEntry | None] = []
        self._newest: dict[int, int] = {}  # PID -> the row of the newest program with it
        self.appended = 0  # points written since this ring began (slot ages come from it)

    @property
    def nbytes(self) -> int:
        return int(self.data.nbytes + self.others.nbytes)

    def rows(self) -> list[tuple[int, ProcessEntry]]:
        """(row, entry) of every process with points in the ring."""
        return [(r, e) for r, e in enumerate(self.entries) if e is not None]

    def row_of(self, pid: int, started_s: float | None = None) -> int | None:
        """The row of the newest program with ``pid`` (and that start time, when given)."""
        found = [(e.last_seen, r) for r, e in self.rows()
                 if e.pid == pid and e.same_program(started_s)]
        return max(found)[1] if found else None

    def write(self, slot: int, processes: Iterable[GpuProcess]) -> None:
        """The processes listed at ``slot`` (this GPU's only); NaN for every other row."""
        self.appended += 1
        self.data[slot] = np.nan
        self.others[slot] = np.nan
        self._free_gone()
        written: set[int] = set()
        for p in processes:
            row = self._row_for(p)
            values = _values(p)
            if row is None:  # beyond the cap: counted, nameless, in "others"
                mem = values[0]
                if not math.isnan(mem):
                    held = self.others[slot]
                    self.others[slot] = mem if math.isnan(held) else held + mem
                continue
            entry = self.entries[row]
            assert entry is not None
            entry.last_seen = self.appended
            entry.name = p.name or entry.name
            if row in written:  # a PID listed twice on one GPU (compute and graphics)
                self.data[slot, :, row] = np.fmax(self.data[slot, :, row], values)
            else:
                self.data[slot, :, row] = values
                written.add(row)

    def _free_gone(self) -> None:
        """Forget processes whose every point has been overwritten."""
        for r, e in self.rows():
            if self.appended - e.last_seen >= self.capacity:
                self._forget(r)

    def _row_for(self, p: GpuProcess) -> int | None:
        """Its row (a PID with another start time is another program: a row of its own);
        a new row for a process not seen before, None when there is none to give."""
        row = self._newest.get(p.pid)
        entry = None if row is None else self.entries[row]
        if row is not None and entry is not None and entry.same_program(p.started_s):
            if entry.started_s is None:
                entry.started_s = p.started_s
            return row
        row = self._free_row()
        if row is not None:
            self.entries[row] = ProcessEntry(p.pid, p.started_s, p.name, self.appended)
            self._newest[p.pid] = row
        return row

    def _free_row(self) -> int | None:
        for r, e in enumerate(self.entries):
            if e is None:
                return r
        if len(self.entries) < self.max_rows:
            self._grow(min(self.max_rows, len(self.entries) + _ROWS_STEP))
            return self._free_row()
        # full: the row of the process gone longest, folded into "others" (not one listed now)
        gone = [(e.last_seen, r) for r, e in self.rows() if e.last_seen < self.appended]
        if not gone:
            return None
        _, r = min(gone)
        self._fold(r)
        return r

    def _fold(self, row: int) -> None:
        mem = self.data[:, 0, row]
        has = ~np.isnan(mem)
        self.others[has] = np.where(np.isnan(self.others[has]), 0.0, self.others[has]) + mem[has]
        self._forget(row)

    def _forget(self, row: int) -> None:
        entry = self.entries[row]
        if entry is not None and self._newest.get(entry.pid) == row:
            del self._newest[entry.pid]
        self.entries[row] = None
        self.data[:, :, row] = np.nan

    def _grow(self, rows: int) -> None:
        grown = np.full((self.capacity, len(FIELDS), rows), np.nan, dtype=np.float32)
        grown[:, :, :self.data.shape[2]] = self.data
        self.data = grown
        self.entries += [None] * (rows - len(self.entries))

    def resized(self, keep: np.ndarray, capacity: int) -> ProcessRing:
        """A ring of ``capacity`` slots holding the slots ``keep`` (oldest first) of this one,
        as the GPU's ring does in ``_Ring.resized``."""
        new = ProcessRing(capacity, self.max_rows)
        n = len(keep)
        new.data = np.full((capacity, len(FIELDS), self.data.shape[2]), np.nan,
                           dtype=np.float32)
        new.data[:n] = self.data[keep]
        new.others[:n] = self.others[keep]
        new.appended = n
        for r, e in enumerate(self.entries):  # ages counted again from the slots kept
            age = self.appended - e.last_seen if e is not None else None
            if e is None or age is None or age >= n:
                new.entries.append(None)
                new.data[:, :, r] = np.nan
            else:
                new.entries.append(ProcessEntry(e.pid, e.started_s, e.name, n - age))
                if self._newest.get(e.pid) == r:
                    new._newest[e.pid] = r
        return new
