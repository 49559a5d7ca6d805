"""When the next reading is due: on a fixed grid of intervals, skipping slots a late read
has already overrun, so a slow tick is never followed at once by another one."""

from __future__ import annotations

import math

MIN_GAP_FRACTION = 0.5  # the next slot is at least half an interval after a late tick ends


def next_due(anchor: float, interval_s: float, now: float) -> float:
    """The first slot ``anchor + k * interval_s`` (k >= 1) at least half an interval after
    ``now``. A tick that ran late therefore skips the slots it overran instead of being
    followed by a catch-up tick (two readings ms apart carrying the same values)."""
    earliest = now + MIN_GAP_FRACTION * interval_s
    k = max(1, math.ceil((earliest - anchor) / interval_s - 1e-9))
    return anchor + k * interval_s
