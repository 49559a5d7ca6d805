"""A driver that reports no GPUs: --once and the window say why and what to try."""

from __future__ import annotations

import pytest
from fakenvml import FakeNvml
from faults_helpers import run_once
from PySide6.QtWidgets import QLabel

from gpumon.telemetry.nvml.source import NvmlSource


def test_once_with_zero_gpus_prints_the_hint(fake_nvml: FakeNvml,
                                             capfd: pytest.CaptureFixture[str]) -> None:
    fake_nvml.set_gpu_count(0)
    rc, out, _ = run_once(capfd)
    assert rc == 0
    text = " ".join(line.strip("| ") for line in out.splitlines())
    assert "No GPUs found." in text
    assert "reports no GPUs" in text and "docker run --gpus all" in text
    assert "--simulate" in text


def test_window_with_zero_gpus_shows_the_hint(qtbot, make_window,
                                              fake_nvml: FakeNvml) -> None:
    fake_nvml.set_gpu_count(0)
    w = make_window(NvmlSource)
    label = w.gpu_grid.findChild(QLabel, "noGpusLabel")
    qtbot.waitUntil(lambda: "docker run --gpus all" in label.text(), timeout=5000)
    assert label.isVisible() and "reports no GPUs" in label.text()
