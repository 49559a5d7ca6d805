"""A GPU's used memory over time as stacked bands: the largest processes, the rest as
"others", and what no process accounts for (the driver's reservation, contexts of processes
not visible here) as the remainder. Qt-free; the GPU panels draw it (ui/monitor/memory_stack.py).

Bands, bottom to top: the ``top`` processes with the highest peak in the window (largest
first, so the biggest sits steady on the axis), "others" (every other process, and the
History's memory of processes beyond its cap), and the remainder = used − the processes.
Where the processes add up to more than used (their readings and the device's are taken a
moment apart), the remainder is 0 and the stack's top is their sum. Where used is not known
(a lost GPU, a gap), every band is NaN: a gap in the graph.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpumon.telemetry.history.store import ProcessMemory

TOP_PROCESSES = 5
OTHERS, REMAINDER = "others", "remainder"


@dataclass(frozen=True)
class Band:
    """One band: ``key`` is ``"pid:<pid>:<start>"``, OTHERS or REMAINDER; ``values`` its
    thickness (bytes) at each time; ``peak_bytes`` its largest."""

    key: str
    pid: int | None
    name: str | None  # the process's name: untrusted text, raw
    values: np.ndarray
    peak_bytes: float


@dataclass(frozen=True)
class MemoryBands:
    times: np.ndarray
    used: np.ndarray
    bands: tuple[Band, ...]  # bottom to top

    def tops(self) -> list[np.ndarray]:
        """The top edge of each band (the running sum), bottom to top."""
        edge = np.zeros(len(self.times))
        tops = []
        for band in self.bands:
            edge = edge + band.values
            tops.append(edge)
        return tops

    @property
    def attributed(self) -> bool:
        """Whether any process's memory is known in the window."""
        return any(b.key != REMAINDER and b.peak_bytes > 0 for b in self.bands)


def _peak(values: np.ndarray) -> float:
    finite = values[np.isfinite(values)]
    return float(finite.max()) if finite.size else 0.0


def memory_bands(memory: ProcessMemory, top: int = TOP_PROCESSES) -> MemoryBands:
    """The bands of ``memory`` (see the module docstring)."""
    used = np.asarray(memory.used, dtype=float)
    gap = ~np.isfinite(used)
    ranked = sorted(((_peak(v), e.pid, e, v) for e, v in memory.processes),
                    key=lambda item: (-item[0], item[1]))
    ranked = [r for r in ranked if r[0] > 0]  # a process never holding memory: no band
    bands: list[Band] = []
    total = np.zeros(len(used))
    for peak, pid, entry, values in ranked[:top]:
        v = np.where(np.isfinite(values), values, 0.0)
        total += v
        bands.append(Band(f"pid:{pid}:{entry.started_s}", pid, entry.name,
                          np.where(gap, np.nan, v), peak))
    rest = np.where(np.isfinite(memory.others), memory.others, 0.0)
    for _, _, _, values in ranked[top:]:
        rest = rest + np.where(np.isfinite(values), values, 0.0)
    if rest.any():
        total += rest
        bands.append(Band(OTHERS, None, None, np.where(gap, np.nan, rest), _peak(rest)))
    remainder = np.where(gap, np.nan, np.maximum(np.where(gap, 0.0, used) - total, 0.0))
    bands.append(Band(REMAINDER, None, None, remainder, _peak(remainder)))
    return MemoryBands(np.asarray(memory.times, dtype=float), used, tuple(bands))
