"""The sampling cadence: slots on a fixed grid; a late tick skips the slots it overran."""

from __future__ import annotations

import pytest

from gpumon.telemetry.model.cadence import next_due


def test_on_time_ticks_follow_the_grid() -> None:
    assert next_due(10.0, 1.0, 10.01) == pytest.approx(11.0)
    assert next_due(10.0, 1.0, 10.49) == pytest.approx(11.0)
    assert next_due(10.0, 0.2, 10.0) == pytest.approx(10.2)


def test_a_late_tick_skips_what_it_overran_and_keeps_the_grid() -> None:
    # a 0.2 s cadence; the read that started at 10.0 ended at 10.31 (slow fields)
    assert next_due(10.0, 0.2, 10.31) == pytest.approx(10.6)
    assert next_due(10.0, 0.2, 10.29) == pytest.approx(10.4)
    # far behind: the next slot on the same grid, never a burst of catch-up ticks
    assert next_due(10.0, 1.0, 15.7) == pytest.approx(17.0)
