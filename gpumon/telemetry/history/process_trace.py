"""One process's readings over time, for its own view: GPU memory and SM % on each GPU it
uses, host CPU % and RSS. Qt-free.

``ProcessTrace(pid, capacity)`` takes every Snapshot (``add``) and keeps at most ``capacity``
readings per series (the oldest go first), so an open view costs bounded memory however long
it stays. The readings start when the trace is made: the History keeps no per-process series.
When the process is no longer listed, ``exited_s`` is the snapshot time it was first missing;
the series stay, and a PID listed again later (reused by another program) is not followed.
"""

from __future__ import annotations

import bisect
import math
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from gpumon.telemetry.history.store import History
from gpumon.telemetry.model.types import GpuProcess, Snapshot

Series = deque[tuple[float, float | None]]  # (time.time(), value or None)


@dataclass
class ProcessTrace:
    pid: int
    capacity: int = 3600
    latest: GpuProcess | None = None  # its latest row (the first GPU's, when on several)
    exited_s: float | None = None
    gpu_mem: dict[int, Series] = field(default_factory=dict)  # per GPU index, bytes
    sm_pct: dict[int, Series] = field(default_factory=dict)  # per GPU index
    cpu_pct: Series = field(init=False)
    rss_bytes: Series = field(init=False)
    filled_until: float = -math.inf  # snapshots up to this time came from the History

    def __post_init__(self) -> None:
        self.cpu_pct = deque(maxlen=self.capacity)
        self.rss_bytes = deque(maxlen=self.capacity)

    def add(self, snap: Snapshot) -> None:
        """Append the process's readings of ``snap``; mark it exited when it is not listed."""
        if self.exited_s is not None or snap.timestamp_s <= self.filled_until:
            return
        rows = [p for p in snap.processes if p.pid == self.pid]
        if not rows:
            if self.latest is not None:
                self.exited_s = snap.timestamp_s
            return
        if self.latest is not None and self.latest.started_s is not None and (
                rows[0].started_s not in (None, self.latest.started_s)):
            self.exited_s = snap.timestamp_s  # the PID now belongs to another program
            return
        t = snap.timestamp_s
        for p in rows:
            self._series(self.gpu_mem, p.gpu_index).append(
                (t, None if p.gpu_mem_bytes is None else float(p.gpu_mem_bytes)))
            self._series(self.sm_pct, p.gpu_index).append((t, p.sm_util_pct))
        self.cpu_pct.append((t, rows[0].cpu_pct))
        rss = rows[0].host_rss_bytes
        self.rss_bytes.append((t, None if rss is None else float(rss)))
        self.latest = rows[0]

    def fill_from(self, history: History, process: GpuProcess) -> None:
        """The History's points of ``process`` (its PID and, when known, start time) from
        its first point on each GPU, None where it was not listed; the host's CPU and RSS
        from the GPU where it has the most points. Call before the first ``add``."""
        started_s = process.started_s
        longest = 0
        for gpu in history.gpu_indices():
            t, mem = history.process_series(gpu, self.pid, "gpu_mem_bytes", started_s=started_s)
            got = {key: history.process_series(gpu, self.pid, key, started_s=started_s)[1]
                   for key in ("sm_util_pct", "cpu_pct", "host_rss_bytes")}
            listed = ~np.isnan(mem) | ~np.isnan(got["sm_util_pct"]) | ~np.isnan(
                got["cpu_pct"]) | ~np.isnan(got["host_rss_bytes"])
            if not listed.any():
                continue
            first = int(np.argmax(listed))
            t = t[first:]
            self.gpu_mem[gpu] = _points(t, mem[first:], self.capacity)
            self.sm_pct[gpu] = _points(t, got["sm_util_pct"][first:], self.capacity)
            if len(t) > longest:
                longest = len(t)
                self.cpu_pct = _points(t, got["cpu_pct"][first:], self.capacity)
                self.rss_bytes = _points(t, got["host_rss_bytes"][first:], self.capacity)
            self.filled_until = max(self.filled_until, float(t[-1]))
            self.latest = process  # listed before: gone from a later snapshot is an exit

    def _series(self, table: dict[int, Series], gpu: int) -> Series:
        series = table.get(gpu)
        if series is None:
            series = table[gpu] = deque(maxlen=self.capacity)
        return series


def _points(times: np.ndarray, values: np.ndarray, capacity: int) -> Series:
    return deque(((float(t), None if math.isnan(v) else float(v))
                  for t, v in zip(times, values, strict=True)), maxlen=capacity)


def value_at(series: Series, t: float) -> float | None:
    """The reading of ``series`` at time ``t``: the newest at or before it; None before the
    first one or where the value was not reported (a hover readout)."""
    i = bisect.bisect_right(series, t, key=lambda point: point[0]) - 1
    return series[i][1] if i >= 0 else None


def latest_value(series: Series) -> float | None:
    """The newest reading of ``series`` (None when it has none)."""
    return series[-1][1] if series else None
