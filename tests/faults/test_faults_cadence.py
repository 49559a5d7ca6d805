"""A tick that runs late (slow fields, a slow driver call) is not followed at once by
another: readings keep at least half an interval apart, on the same cadence."""

from __future__ import annotations

import time
from typing import Any

import pynvml
import pytest
from fakenvml import FakeNvml

from gpumon.telemetry.nvml.source import NvmlSource
from gpumon.ui.window.workers import SamplingThread

INTERVAL_S = 0.2


def test_a_late_tick_does_not_cause_a_catch_up_tick(qtbot, fake_nvml: FakeNvml,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    real = pynvml.nvmlDeviceGetUtilizationRates
    calls = [0]

    def late_on_some_ticks(handle: Any) -> Any:
        calls[0] += 1
        if calls[0] in (3, 6):
            time.sleep(0.33)  # this tick overruns its slot by more than half an interval
        return real(handle)

    late_on_some_ticks.__name__ = real.__name__
    monkeypatch.setattr(pynvml, "nvmlDeviceGetUtilizationRates", late_on_some_ticks)
    fake_nvml.set_gpu_count(2)
    stamps: list[float] = []
    sampling = SamplingThread(NvmlSource, INTERVAL_S)
    sampling.snapshot.connect(lambda snap: stamps.append(snap.samples[-1].timestamp_s))
    sampling.start()
    try:
        qtbot.waitUntil(lambda: len(stamps) >= 10, timeout=10_000)
    finally:
        assert sampling.stop()
    gaps = [b - a for a, b in zip(stamps, stamps[1:], strict=False)]
    assert min(gaps) >= 0.4 * INTERVAL_S, [round(g, 3) for g in gaps]
