"""A machine without a GPU: the Playground's right half shows the kernel process's main
memory, live, labelled as the CPU, and a big CPU tensor visibly moves the lines."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox

from gpumon.telemetry.procs.rss import rss_of
from gpumon.ui.playground.cpu_view import steps

MIB = 2**20


def test_steps_jump_at_each_change() -> None:
    x, y = steps([(0.0, 1.0), (2.0, 5.0)], now=3.0)
    assert x.tolist() == [0.0, 2.0, 2.0, 3.0] and y.tolist() == [1.0, 1.0, 5.0, 5.0]


def test_no_gpu_playground_shows_the_kernels_memory_moving(qtbot, make_window):
    from gpumon.telemetry.nvml.source import NvmlSource

    w = make_window(NvmlSource)
    qtbot.waitUntil(lambda: w.latest_snapshot is not None, timeout=5000)
    if w.latest_snapshot.gpus:
        pytest.skip("this machine has GPUs: the playground shows their graphs")
    panel = w.playground
    w.tabs.setCurrentWidget(panel)
    view = panel.cpu_view
    qtbot.waitUntil(lambda: view.isVisible() and w.kernel_link.kernel_pid is not None,
                    timeout=30000)
    assert not w.gpu_grid.isVisible()  # not "No GPUs to show."
    title = view.title.text()
    assert title.startswith("CPU") and "GPU" not in title
    qtbot.waitUntil(lambda: len(view.probe.series()[0]) >= 2, timeout=10000)
    _, before = view.probe.series()
    base = before[-1]
    assert abs(base - (rss_of(w.kernel_link.kernel_pid) or 0)) < 200 * MIB  # the kernel's RSS
    # A 256 MiB tensor on the cpu, made with the form (Enter in the shape field).
    panel.forms.shape_edit.setText("8192, 8192")
    panel.forms.findChild(QComboBox, "fillCombo").setCurrentText("ones")
    qtbot.keyClick(panel.forms.shape_edit, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: panel.log.count() >= 1, timeout=30000)
    assert panel.log.outcomes()[0].ok
    qtbot.waitUntil(lambda: view.probe.series()[1][-1] > base + 200 * MIB, timeout=10000)

    def drawn() -> bool:  # the RSS curve, the tensors' curve and the readout redrawn
        _, rss = view.rss_curve.getData()
        _, tensors = view.tensor_curve.getData()
        return (rss is not None and len(rss) > 0 and tensors is not None and len(tensors) > 0
                and np.nanmax(rss) * 2**30 > base + 200 * MIB
                and tensors[-1] * 2**30 >= 256 * MIB and "256.00 MiB" in view.readout.text())
    qtbot.waitUntil(drawn, timeout=10000)
    _, drawn_rss = view.rss_curve.getData()
    assert drawn_rss is not None and np.nanmax(drawn_rss) * 2**30 > base + 200 * MIB  # on screen
    _, tensors = view.tensor_curve.getData()
    assert tensors is not None and tensors[-1] * 2**30 == pytest.approx(256 * MIB)
    assert "256.00 MiB" in view.readout.text() and "RSS" in view.readout.text()
    assert len(view.markers()) == 1
    assert "GPU" not in " ".join(view.legend_names())
    assert f"PID {w.kernel_link.kernel_pid}" in view.title.text()


def test_with_gpus_the_grid_shows_and_the_cpu_view_does_not(qtbot, make_window):
    w = make_window()
    qtbot.waitUntil(lambda: len(w.gpu_grid.panels) == 4, timeout=5000)
    w.tabs.setCurrentWidget(w.playground)
    # the page borrows the grid once the frame that answers the tab is painted
    qtbot.waitUntil(lambda: w.gpu_grid.parent() is w.playground.graphs, timeout=3000)
    assert w.gpu_grid.isVisible() and not w.playground.cpu_view.isVisible()
    w.tabs.setCurrentIndex(0)
    qtbot.waitUntil(lambda: w.gpu_grid.parent() is w.monitor_page, timeout=3000)
    assert w.gpu_grid.isVisible() and not w.playground.cpu_view.probe.running


def test_a_marker_label_shows_code_with_braces(qtbot) -> None:
    import time

    from gpumon.playground.data.actions import RunCode
    from gpumon.playground.data.outcome import Outcome
    from gpumon.ui.playground.cpu_view import CpuMemoryView

    view = CpuMemoryView(lambda: None)
    qtbot.addWidget(view)
    code = "d = {'a': 1}"
    out = Outcome(RunCode(code), code, True, time.time(), 0.0)
    view.add_outcome(out)  # pyqtgraph formats marker labels: '{' raised IndexError
    assert view.markers()[0].label.toPlainText() == "d = {'a': 1}"
