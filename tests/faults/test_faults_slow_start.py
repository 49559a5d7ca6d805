"""A driver slow to start: the window says it is waiting for the driver, and counts."""

from __future__ import annotations

import re

from fakenvml import FakeNvml
from PySide6.QtWidgets import QLabel

from gpumon.telemetry.nvml.source import NvmlSource


def test_slow_driver_start_says_waiting_and_counts(qtbot, make_window,
                                                   fake_nvml: FakeNvml) -> None:
    fake_nvml.set_gpu_count(2)
    fake_nvml.set_delay("nvmlInit", -1)  # hangs until it is let go below
    w = make_window(NvmlSource, interval_s=0.2)
    seen: set[int] = set()

    def counted() -> bool:
        m = re.fullmatch(r"Waiting for the NVIDIA driver: (\d+) s", w.header.status_line.text())
        if m:
            seen.add(int(m.group(1)))
            assert w.header.source_badge.text() == "WAITING"
            empty = w.gpu_grid.findChild(QLabel, "noGpusLabel")
            assert empty.text().startswith("Waiting for the NVIDIA driver")
        return {1, 2} <= seen

    try:
        qtbot.waitUntil(counted, timeout=3000)
    finally:
        fake_nvml.set_delay("", 0)
    qtbot.waitUntil(lambda: len(w.gpu_grid.panels) == 2, timeout=5000)
    qtbot.waitUntil(lambda: "2 GPUs" in w.header.status_line.text(), timeout=2000)
    assert w.header.source_badge.text() == "NVML"


def test_slow_first_reading_also_says_waiting(qtbot, make_window,
                                              fake_nvml: FakeNvml) -> None:
    fake_nvml.set_delay("nvmlDeviceGetUtilizationRates", -1)  # nvmlInit is quick
    w = make_window(NvmlSource, interval_s=0.2)
    try:
        qtbot.waitUntil(
            lambda: w.header.status_line.text() == "Waiting for the NVIDIA driver: 2 s",
            timeout=3000)
        assert "stale" not in w.header.status_line.text()
    finally:
        fake_nvml.set_delay("", 0)
    qtbot.waitUntil(lambda: len(w.gpu_grid.panels) == 1, timeout=5000)
    fake_nvml.set_delay("nvmlDeviceGetUtilizationRates", 0)
    qtbot.waitUntil(lambda: "1 GPU" in w.header.status_line.text(), timeout=5000)
