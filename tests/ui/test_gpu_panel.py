"""One GpuPanel on its own: the readouts that live in the header's tooltip, and labels that
are set only when their text changes."""

from __future__ import annotations

import numpy as np
from qt_fixtures import shown_tip

from gpumon.telemetry.model.types import GpuInfo, GpuSample
from gpumon.ui.monitor.panel import GpuPanel
from gpumon.units import GIB

INFO = GpuInfo(0, "Test GPU", "GPU-0000", "00000000:01:00.0", mem_total_bytes=16 * GIB)


def _series(_gpu: int, _key: str) -> tuple[np.ndarray, np.ndarray]:
    return np.array([1.0, 2.0]), np.array([1.0, 2.0])


def test_panel_header_tooltip_follows_the_sample(qtbot) -> None:
    panel = GpuPanel(INFO)
    qtbot.addWidget(panel)
    panel.update_view(GpuSample(0, 1.0, mem_free_bytes=2 * GIB, encoder_util_pct=7.0), 1.0,
                      _series)
    tip = shown_tip(panel.title)
    assert "Memory free: 2.00 GiB" in tip and "Encoder: 7 %" in tip
    assert "Decoder: N/A" in tip and "PCIe RX: N/A" in tip
    assert shown_tip(panel.readouts) == tip
    panel.update_view(GpuSample(0, 2.0, mem_free_bytes=GIB), 2.0, _series)
    assert "Memory free: 1.00 GiB" in shown_tip(panel.title)
    assert "Encoder: N/A" in shown_tip(panel.title)


def test_panel_tooltip_says_which_reads_failed_on_this_tick(qtbot) -> None:
    panel = GpuPanel(INFO)
    qtbot.addWidget(panel)
    failed = ("nvmlDeviceGetUtilizationRates: Unknown Error",)
    panel.update_view(GpuSample(0, 1.0, temperature_c=50.0, failed_reads=failed), 1.0, _series)
    tip = shown_tip(panel.title)
    assert "N/A on this tick because NVML failed" in tip
    assert "nvmlDeviceGetUtilizationRates: Unknown Error" in tip
    assert not panel.lost_label.isVisibleTo(panel)
    panel.update_view(GpuSample(0, 2.0, temperature_c=50.0), 2.0, _series)
    assert "NVML failed" not in shown_tip(panel.title)


def test_labels_are_set_only_when_their_text_changes(qtbot) -> None:
    panel = GpuPanel(INFO)
    qtbot.addWidget(panel)
    calls: list[str] = []
    for label in (panel.mem_label, panel.util_label, panel.readouts):
        original = label.setText

        def counting(text: str, _set=original) -> None:
            calls.append(text)
            _set(text)

        label.setText = counting  # type: ignore[method-assign]
    tips: list[str] = []
    original_tip = panel.title.setToolTip
    panel.title.setToolTip = lambda t: (tips.append(t), original_tip(t))  # type: ignore[method-assign]
    sample = GpuSample(0, 1.0, mem_used_bytes=GIB, gpu_util_pct=50.0, temperature_c=60.0)
    panel.update_view(sample, 1.0, _series)
    assert len(calls) == 3 and tips == []  # the tooltip is made when it is shown
    panel.update_view(GpuSample(0, 2.0, mem_used_bytes=GIB, gpu_util_pct=50.0,
                                temperature_c=60.0), 2.0, _series)
    assert len(calls) == 3 and tips == []  # same texts: nothing set again
    panel.update_view(GpuSample(0, 3.0, mem_used_bytes=GIB, gpu_util_pct=51.0,
                                temperature_c=60.0), 3.0, _series)
    assert len(calls) == 4 and "51 %" in calls[-1]  # only the utilization label changed
    assert "51 %" in panel.util_label.text()
    assert tips == []
    assert "Memory free" in shown_tip(panel.title) and len(tips) == 1
    shown_tip(panel.title)
    assert len(tips) == 1  # the same text: not set again


def test_memory_readout_shows_free(qtbot) -> None:
    panel = GpuPanel(INFO)
    qtbot.addWidget(panel)
    panel.update_view(GpuSample(0, 1.0, mem_total_bytes=16 * GIB, mem_used_bytes=3 * GIB,
                                mem_reserved_bytes=GIB // 2, mem_free_bytes=25 * GIB // 2),
                      1.0, _series)
    assert panel.mem_label.text().replace("■", "").split() == [
        "Memory", "3.00", "/", "16.00", "GiB", "·", "free", "12.50"]
    panel.update_view(GpuSample(0, 2.0, mem_total_bytes=16 * GIB), 2.0, _series)
    assert panel.mem_label.text().endswith("free N/A")
