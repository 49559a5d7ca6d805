"""Two runs side by side: the second recording's series, aligned at the first one's start,
and the differences of their means over the time shown.

``RunSeries.load`` decodes the second recording once (on a thread of the caller's choice:
~1 ms a snapshot of 8 GPUs) and keeps only the series the panels draw, at most
``MAX_POINTS`` a series (a long recording is read every k-th snapshot), so a comparison
holds ~1 MB whatever the file's size. Aligned at their starts: the second run's time ``t``
shows at ``t + offset_s``, where ``offset_s`` is the first run's start minus the second's.
Qt-free; numpy, as the History.
"""

from __future__ import annotations

import math

import numpy as np

from gpumon.recording.reader import Recording
from gpumon.telemetry.model.metrics import value_of

KEYS = ("mem_used_bytes", "gpu_util_pct")
MAX_POINTS = 20_000


class RunSeries:
    """The second run's series by (GPU, key), times already shifted onto the first run's."""

    def __init__(self, name: str, offset_s: float,
                 series: dict[tuple[int, str], tuple[np.ndarray, np.ndarray]]) -> None:
        self.name = name
        self.offset_s = offset_s
        self._series = series

    @classmethod
    def load(cls, recording: Recording, first_start_s: float,
             keys: tuple[str, ...] = KEYS, max_points: int = MAX_POINTS) -> RunSeries:
        """``recording``'s series, aligned so that its start falls on ``first_start_s``."""
        offset = first_start_s - recording.start_s
        step = max(1, math.ceil(len(recording) / max_points))
        points: dict[tuple[int, str], tuple[list[float], list[float]]] = {}
        for i in range(0, len(recording), step):
            snap = recording.read(i)
            if snap is None:
                continue
            for sample in snap.samples:
                for key in keys:
                    t, v = points.setdefault((sample.index, key), ([], []))
                    value = None if sample.lost else value_of(sample, key)
                    t.append(sample.timestamp_s + offset)
                    v.append(math.nan if value is None else float(value))
        series = {k: (np.asarray(t, dtype=float), np.asarray(v, dtype=float))
                  for k, (t, v) in points.items()}
        return cls(recording.name, offset, series)

    def series(self, gpu: int, key: str) -> tuple[np.ndarray, np.ndarray]:
        """(times on the first run's clock, values); empty where the run had no such GPU."""
        return self._series.get((gpu, key), (np.empty(0), np.empty(0)))

    def gpus(self) -> list[int]:
        return sorted({gpu for gpu, _ in self._series})


def mean_between(t: np.ndarray, v: np.ndarray, t0: float, t1: float) -> float | None:
    """The mean of the finite values at times from ``t0`` to ``t1``; None when there is none."""
    if len(t) == 0:
        return None
    chosen = v[(t >= t0) & (t <= t1)]
    chosen = chosen[np.isfinite(chosen)]
    return float(chosen.mean()) if len(chosen) else None


def mean_difference(first: tuple[np.ndarray, np.ndarray], second: tuple[np.ndarray, np.ndarray],
                    t0: float, t1: float) -> float | None:
    """The first run's mean minus the second's over ``t0``..``t1`` (None: either has none)."""
    a, b = mean_between(*first, t0, t1), mean_between(*second, t0, t1)
    return None if a is None or b is None else a - b
