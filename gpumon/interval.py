"""The seconds between two readings of the GPUs: their range, and how a value is checked.

:data:`SAMPLING` is the monitor's interval, one range for the command line (``--interval``,
``--watch``), the window (the toolbar's spin box, the remembered setting) and the sampler,
so a value the command line accepts is the value the window shows and samples at. No Qt.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from gpumon.i18n import tr


@dataclass(frozen=True)
class IntervalRange:
    """Seconds from ``low`` to ``high``, to ``decimals`` places (what the spin box shows)."""

    low: float
    high: float
    default: float = 1.0
    decimals: int = 2

    def parse(self, text: str) -> float:
        """``text`` as seconds, rounded to ``decimals`` places; ValueError with a sentence in
        the chosen language for words, nan, infinities and anything out of range."""
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not self.low <= value <= self.high:  # also refuses nan
            raise ValueError(tr("must be a number of seconds from {low} to {high}, got {text}",
                                low=f"{self.low:g}", high=f"{self.high:g}", text=repr(text)))
        return self._rounded(value)

    def clamp(self, value: float) -> float:
        """The nearest value in range, rounded as :meth:`parse` rounds; the default for nan
        (a spin box, a settings file or a caller's number, already a float)."""
        value = float(value)
        if math.isnan(value):
            return self.default
        return self._rounded(min(self.high, max(self.low, value)))

    def _rounded(self, value: float) -> float:
        """``value`` to ``decimals`` places as Qt's spin box rounds it: from the float's exact
        value, halves away from zero (``0.125`` is ``0.13``; Python's round() gives 0.12)."""
        return float(Decimal(value).quantize(Decimal(10) ** -self.decimals, ROUND_HALF_UP))


#: How often the monitor reads the GPUs.
SAMPLING = IntervalRange(low=0.1, high=10.0)
#: How long ``gpumon exporter`` serves one reading to every scraper before reading again: up
#: to a minute, Prometheus's default scrape interval (a graph drawn from readings a minute
#: apart would show little, hence the monitor's 10 s).
EXPORTER = IntervalRange(low=0.1, high=60.0)
#: How long a terminal command waits on a GPU driver that has stopped answering before it
#: gives up (``--timeout``): a healthy driver answers each call within milliseconds, and
#: nvmlInit, the slowest, within a few seconds on a machine with 8 GPUs.
DRIVER_WAIT = IntervalRange(low=0.5, high=3600.0, default=10.0, decimals=1)
