"""The metrics table drives the rest: NvmlSource reads each row, a GPU panel shows each row
where the row says, and a sample has a field for each."""

from __future__ import annotations

import dataclasses

from gpumon.telemetry.model.metrics import ACTIVITY_KEYS, METRICS
from gpumon.telemetry.model.readouts import extra_readouts, readout_line
from gpumon.telemetry.model.types import GpuSample
from gpumon.telemetry.nvml import gpm
from gpumon.telemetry.nvml.readers import READERS
from gpumon.units import GIB

KEYS = [m.key for m in METRICS]


def test_nvml_reads_exactly_the_metrics_of_the_table() -> None:
    assert list(READERS) == [m.key for m in METRICS if not m.gpm]  # same rows, same order
    # the others: GPM's activity and the NVLink rates (nvml/activity.py), all of them
    assert set(ACTIVITY_KEYS) <= set(gpm.FIELDS)


def test_the_activity_lists_are_the_tables_gpm_rows() -> None:
    """GpuSample and MigSample hold the activity as the table's GPM rows, in its order;
    the exporter, the lesson's busy-watch and GPM's reader name only those."""
    from gpumon.telemetry.model.exported import PROF_FIELDS
    from gpumon.telemetry.model.metrics import ACTIVITY_PCT_KEYS
    from gpumon.telemetry.model.types import MigSample
    from gpumon.telemetry.nvml.busy import KEYS as BUSY_KEYS

    assert ACTIVITY_KEYS == tuple(m.key for m in METRICS if m.gpm)
    activity = set(ACTIVITY_PCT_KEYS)
    for cls in (GpuSample, MigSample):
        names = [f.name for f in dataclasses.fields(cls) if f.name in activity]
        assert names == list(ACTIVITY_PCT_KEYS), cls
    assert {f.key for f in PROF_FIELDS if f.key.endswith("_pct")} <= activity
    assert set(BUSY_KEYS) & set(gpm.FIELDS) <= activity


def test_every_metric_is_a_sample_field_and_has_a_place_in_the_panel() -> None:
    fields = {f.name for f in dataclasses.fields(GpuSample)}
    assert set(KEYS) <= fields
    assert {m.panel for m in METRICS} <= {"graph", "line", "cap", "tooltip", "header",
                                          "activity"}
    for before, m in zip(METRICS, METRICS[1:], strict=False):
        if m.panel == "cap":
            assert before.panel == "line", f"{m.key} caps nothing"


SAMPLE = GpuSample(0, 1.0, mem_total_bytes=16 * GIB, mem_used_bytes=6 * GIB,
                   mem_free_bytes=10 * GIB, mem_reserved_bytes=GIB // 2, temperature_c=45.0,
                   power_w=120.4, power_limit_w=250.0, fan_pct=40.0, sm_clock_mhz=1500.0,
                   mem_clock_mhz=5001.0, pstate="P2", pcie_rx_bytes_per_s=3 * 2**20,
                   encoder_util_pct=12.0)


def test_readout_line_follows_the_table() -> None:
    runs = readout_line(SAMPLE)
    assert "".join(text for text, _ in runs) == (
        "Temp 45 °C · Power 120 / 250 W · Fan 40 % · SM 1500 MHz · Mem 5001 MHz · Perf P2")
    assert [text for text, bold in runs if bold] == [
        "45 °C", "120", "40 %", "1500 MHz", "5001 MHz", "P2"]
    lost = readout_line(dataclasses.replace(SAMPLE, lost=True))
    assert [text for text, bold in lost if bold] == ["N/A"] * 6


def test_tooltip_lists_every_tooltip_metric_by_label() -> None:
    lines = extra_readouts(SAMPLE).splitlines()
    tooltip = [m for m in METRICS if m.panel == "tooltip"]
    assert [line.split(": ")[0] for line in lines] == [m.label for m in tooltip]
    assert lines[:3] == ["Memory reserved: 0.50 GiB", "Memory free: 10.00 GiB",
                         "PCIe RX: 3.0 MiB/s"]
    assert "PCIe TX: N/A" in lines and "Encoder: 12 %" in lines
