"""A driver's sentinels (issue 53): utilization 4294967295 %, a temperature of -1 C, used
memory above the total (free memory then 1.7e13 MiB, subtracted unsigned), read through the
real binding from the fake driver. Each shows as N/A with the driver's value in the tooltip,
is an empty CSV cell, and never reaches a graph's data."""

from __future__ import annotations

import math

import pytest
from fakenvml import FakeNvml

pytest.importorskip("numpy", reason="numpy is not installed (the window's History needs it)")

from gpumon.telemetry.history.csv_rows import column, record_header, record_rows
from gpumon.telemetry.history.store import History
from gpumon.telemetry.model.readouts import extra_readouts
from gpumon.telemetry.nvml.source import NvmlSource
from gpumon.text.smi_text import render

GIB = 1 << 30


def test_sentinels_become_na_with_the_reason(fake_nvml: FakeNvml) -> None:
    fake_nvml.set_gpu_count(2)
    fake_nvml.set_value(0, "util_gpu", 0xFFFFFFFF)
    fake_nvml.set_value(0, "temp", 0xFFFFFFFF)  # TemperatureV's int: -1
    fake_nvml.set_value(0, "mem_total", 16 * GIB)
    fake_nvml.set_value(0, "mem_used", 17 * GIB)
    fake_nvml.set_value(1, "util_gpu", 37)
    source = NvmlSource()
    assert source.open().usable
    try:
        snap = source.sample()
    finally:
        source.close()
    bad, good = snap.samples
    assert bad.gpu_util_pct is None and bad.temperature_c is None
    assert bad.mem_used_bytes is None and bad.mem_free_bytes is None
    assert bad.mem_total_bytes == 16 * GIB and not bad.lost
    found = dict(bad.implausible)
    assert found.pop("mem_free_bytes") > 1e19  # 17 GiB used of 16, subtracted unsigned
    assert found == {"gpu_util_pct": 4294967295.0, "temperature_c": -1.0,
                     "mem_used_bytes": float(17 * GIB)}
    assert good.gpu_util_pct == 37.0 and good.implausible == ()
    text = render(snap)
    assert "4294967295" not in text and "-1C" not in text
    tooltip = extra_readouts(bad)
    assert "GPU util: N/A, the driver gave 4294967295, which no GPU can read" in tooltip
    assert "the driver gave -1," in tooltip
    history = History(8)
    history.append(snap)
    for key in ("gpu_util_pct", "temperature_c", "mem_used_bytes"):
        assert math.isnan(history.series(0, key)[1][-1])  # nothing a graph scales to
    header = record_header()
    row = record_rows(snap)[0]
    assert row[header.index(column("gpu_util_pct"))] == ""
