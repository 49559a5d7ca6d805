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


def test_a_slow_reading_stretches_the_period_to_a_multiple_of_the_interval() -> None:
    """10,000 GPUs from Prometheus took 1.1 s a reading at a 1 s interval: read back to back.
    Now a reading takes at most half the period."""
    from gpumon.telemetry.model.cadence import Cadence

    cadence = Cadence(1.0)
    assert cadence.period_s == 1.0 and not cadence.stretched
    cadence.read_took(0.3)
    assert cadence.period_s == 1.0
    cadence.read_took(1.1)
    assert cadence.period_s == 3.0 and cadence.stretched
    cadence.read_took(1.1)
    assert cadence.period_s == 3.0  # steady: no flapping
    cadence.read_took(0.01)  # fast again: the slow one is forgotten over a few readings
    assert cadence.period_s == 2.0
    cadence.read_took(0.01)
    assert cadence.period_s == 1.0
    cadence.interval_s = 5.0  # a long interval keeps its own period
    cadence.read_took(1.1)
    assert cadence.period_s == 5.0
    for nonsense in (0.0, -1.0, float("nan"), float("inf")):
        cadence.read_took(nonsense)  # untimed or nonsense: nothing learnt
    assert cadence.period_s == 5.0
