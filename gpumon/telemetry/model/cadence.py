"""When the next reading is due: on a fixed grid of intervals, skipping slots a late read
has already overrun, so a slow tick is never followed at once by another one; and how far
apart readings are when reading takes long (``Cadence``)."""

from __future__ import annotations

import math

MIN_GAP_FRACTION = 0.5  # the next slot is at least half an interval after a late tick ends
# A reading may take at most this share of the time between readings. 10,000 GPUs from a
# Prometheus server took 1.1 s a reading at a 1 s interval: the window read back to back
# (52-58 % of a core) and its numbers were never as fresh as "every 1 s" said.
READ_SHARE = 0.5
# How fast a slow reading is forgotten: the slowest recent reading, halved at each reading
# (a one-off slow reading stretches the period for a few readings, not for good).
DECAY = 0.5


def next_due(anchor: float, interval_s: float, now: float) -> float:
    """The first slot ``anchor + k * interval_s`` (k >= 1) at least half an interval after
    ``now``. A tick that ran late therefore skips the slots it overran instead of being
    followed by a catch-up tick (two readings ms apart carrying the same values)."""
    earliest = now + MIN_GAP_FRACTION * interval_s
    k = max(1, math.ceil((earliest - anchor) / interval_s - 1e-9))
    return anchor + k * interval_s


class Cadence:
    """The seconds between readings: the interval chosen, or, when reading takes longer
    than ``READ_SHARE`` of it, the smallest multiple of it that leaves that share."""

    def __init__(self, interval_s: float) -> None:
        self.interval_s = interval_s
        self._slow_s = 0.0  # the slowest recent reading, decaying

    def read_took(self, seconds: float) -> None:
        """One reading took ``seconds`` (0 or less: not timed, nothing learnt)."""
        if seconds > 0.0 and math.isfinite(seconds):
            self._slow_s = max(seconds, self._slow_s * DECAY)

    @property
    def read_s(self) -> float:
        """The slowest recent reading (decaying), in seconds."""
        return self._slow_s

    @property
    def period_s(self) -> float:
        steps = math.ceil(self._slow_s / READ_SHARE / self.interval_s - 1e-9)
        return max(1, steps) * self.interval_s

    @property
    def stretched(self) -> bool:
        """Readings are further apart than the interval chosen."""
        return self.period_s > self.interval_s
