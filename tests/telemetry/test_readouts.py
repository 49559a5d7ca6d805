"""The readouts' text, without Qt: the hover line and a panel's extra readouts."""

from __future__ import annotations

import dataclasses
import math
import time

from gpumon.telemetry.model.metrics import TIME_KEY
from gpumon.telemetry.model.readouts import extra_readouts, format_readout
from gpumon.telemetry.model.types import (
    GpuInfo,
    GpuSample,
    MachineInfo,
    Snapshot,
    SourceState,
    SourceStatus,
)
from gpumon.units import GIB, MIB


def test_extra_readouts_show_free_reserved_pcie_and_codecs() -> None:
    s = GpuSample(0, 1.0, mem_total_bytes=16 * GIB, mem_free_bytes=4 * GIB,
                  mem_reserved_bytes=512 * MIB, pcie_rx_bytes_per_s=3 * MIB,
                  pcie_tx_bytes_per_s=1.5 * MIB, encoder_util_pct=12.0, decoder_util_pct=0.0,
                  energy_mj=3_456_789.0, mem_temperature_c=71.0)
    assert extra_readouts(s).splitlines() == [
        "Memory reserved: 0.50 GiB", "Memory free: 4.00 GiB", "PCIe RX: 3.0 MiB/s",
        "PCIe TX: 1.5 MiB/s", "Encoder: 12 %", "Decoder: 0 %", "Energy: 3456.8 kJ",
        "Memory temp: 71 °C"]


def test_extra_readouts_say_what_is_read_less_often_and_how_often() -> None:
    """The source reads a costly call less often (nvml/budget.py): the tooltip says so."""
    s = GpuSample(0, 1.0, pcie_rx_bytes_per_s=3 * MIB, pcie_tx_bytes_per_s=1.5 * MIB,
                  energy_mj=3_456_789.0,
                  read_every_s=(("energy_mj", 14.2), ("pcie_rx_bytes_per_s", 5.0),
                                ("pcie_tx_bytes_per_s", 5.0), ("processes", 15.0)))
    lines = extra_readouts(s).splitlines()
    assert "Energy: 3456.8 kJ (read every 14 s)" in lines
    assert "PCIe RX: 3.0 MiB/s (read every 5 s)" in lines
    assert "PCIe TX: 1.5 MiB/s (read every 5 s)" in lines
    assert lines[-1] == "Per-process utilization: read every 15 s"
    assert "read every" not in extra_readouts(dataclasses.replace(s, read_every_s=()))


def test_extra_readouts_are_na_where_unsupported_or_lost() -> None:
    unsupported = GpuSample(0, 1.0)
    lost = GpuSample(0, 1.0, lost=True, mem_free_bytes=GIB, encoder_util_pct=5.0)
    for s in (unsupported, lost, None):
        lines = extra_readouts(s).splitlines()
        assert len(lines) == 8 and all(line.endswith(": N/A") for line in lines), lines


def test_hover_readout_names_time_values_units_and_extra_series() -> None:
    t = time.mktime((2026, 1, 2, 14, 3, 12, 0, 0, -1))
    values = {TIME_KEY: t, "mem_used_bytes": 12.34 * GIB, "gpu_util_pct": 45.0,
              "mem_util_pct": math.nan, "temperature_c": 61.0, "power_w": 123.4,
              "torch_allocated_bytes": 2 * GIB, "odd_count": 3.0, "skipped": math.nan}
    text = format_readout(1, t + 12.3, values)
    assert text.startswith("GPU 1 at 14:03:12 (\u221212.3 s): "), text  # a real minus
    parts = text.split(": ", 1)[1].split(" · ")
    assert parts[:2] == ["Memory used 12.34 GiB", "GPU util 45 %"], parts
    assert parts[2].endswith(" N/A") and "61" in parts[3] and "123" in parts[4]
    assert parts[5:] == ["torch allocated 2.00 GiB", "odd count 3"]


def test_hover_readout_without_data_says_so() -> None:
    assert format_readout(3, 0.0, {}) == "GPU 3: no data at this time"


def test_status_line_counts_gpus_and_lost_ones_or_says_why_not() -> None:
    from gpumon.telemetry.model.readouts import status_summary
    from gpumon.telemetry.sources.simulated import SimulatedSource

    src = SimulatedSource(3, seed=1)
    src.open()
    snap = src.sample()
    snap = dataclasses.replace(snap, read_duration_s=0.0123, samples=(
        dataclasses.replace(snap.samples[0], lost=True), *snap.samples[1:]))
    assert status_summary(snap, 0.5) == "3 GPUs · 1 lost · read in 12 ms · every 0.5 s"
    one = dataclasses.replace(snap, gpus=snap.gpus[:1], samples=snap.samples[1:2])
    assert status_summary(one, 1.0).startswith("1 GPU · read in")
    closed = dataclasses.replace(snap, status=SourceStatus(SourceState.DRIVER_NOT_LOADED,
                                                           "The driver is not loaded."))
    assert status_summary(closed, 1.0) == "The driver is not loaded."


def test_a_clusters_status_line_names_the_machine_and_counts_the_whole() -> None:
    """The header of a cluster window said "2 GPUs" while its overview said 4 (issue 54,
    item 11): the machine in focus is named and the cluster's count is beside it."""
    from gpumon.telemetry.model.readouts import status_summary
    from gpumon.telemetry.model.types import HostView

    gpus = tuple(GpuInfo(i, "H100", f"GPU-{i}", "", host="node-a") for i in range(2))
    other = tuple(GpuInfo(i, "H100", f"GPU-b{i}", "", host="node-b") for i in range(2))
    snap = Snapshot(0.0, MachineInfo("here", "Prometheus"), SourceStatus(SourceState.OK, ""),
                    gpus=gpus, read_duration_s=0.007,
                    hosts=(HostView("node-a", True, gpus=gpus), HostView("node-b", True,
                                                                         gpus=other)))
    assert status_summary(snap, 1.0) == (
        "node-a: 2 GPUs of 4 on 2 machines · read in 7 ms · every 1 s")


def test_window_labels_of_every_choice() -> None:
    from gpumon.telemetry.history.store import WINDOW_CHOICES_S
    from gpumon.telemetry.model.readouts import window_label

    labels = [window_label(s) for s in WINDOW_CHOICES_S]
    assert len(set(labels)) == len(labels)  # no two choices read the same
    assert window_label(300) == "5 min" and window_label(3600) == "1 h"
    assert window_label(86400) == "24 h"
