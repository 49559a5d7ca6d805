"""A process's own view: opened with Enter on its row, fed live through the fake driver, and
still there, marked exited with the time, after the process ends."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import psutil
from fakenvml import FakeNvml
from PySide6.QtCore import Qt

from gpumon.telemetry.nvml.source import NvmlSource
from gpumon.ui.monitor.process.view import ProcessView


def test_view_follows_a_process_and_stays_after_it_ends(qtbot, make_window,
                                                         fake_nvml: FakeNvml) -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "job.py"])
    try:
        fake_nvml.add_process(0, child.pid, 2 << 30)
        fake_nvml.add_process_util(0, child.pid, 1_000, sm=33)
        w = make_window(NvmlSource)
        table = w.process_table
        qtbot.waitUntil(lambda: any(p.pid == child.pid
                                    for p in table.process_model.processes), timeout=5000)
        proxy = table.proxy
        row = next(r for r in range(proxy.rowCount())
                   if proxy.index(r, 1).data() == str(child.pid))
        table.setCurrentIndex(proxy.index(row, 0))
        qtbot.keyClick(table, Qt.Key.Key_Return)
        views = [v for v in w.findChildren(ProcessView) if v.trace.pid == child.pid]
        assert len(views) == 1
        view = views[0]
        qtbot.waitUntil(lambda: len(view.trace.gpu_mem.get(0, ())) >= 3, timeout=5000)
        assert view.trace.gpu_mem[0][-1][1] == float(2 << 30)
        assert any(v == 33.0 for _, v in view.trace.sm_pct[0])
        assert "job.py" in view.details.text()
        assert f"parent {os.getpid()} (" in view.details.text()  # this test started it
        assert f"User {psutil.Process(child.pid).username()} · started " in view.details.text()
        curve = view.plots["gpu_mem"].getPlotItem().listDataItems()[0]
        assert curve.getData()[1][-1] == 2.0  # GiB
        child.kill()
        child.wait(timeout=5)
        fake_nvml.clear_processes()
        qtbot.waitUntil(lambda: view.status.text().startswith("Exited at "), timeout=5000)
        assert view.isVisible() and len(view.trace.gpu_mem[0]) >= 3
        view.close()
    finally:
        child.kill()
        child.wait(timeout=5)


def test_a_simulated_process_view_says_so(qtbot, make_window) -> None:
    w = make_window()
    qtbot.waitUntil(lambda: w.process_table.proxy.rowCount() > 0, timeout=5000)
    view = w.open_process_view(w.process_table.proxy.index(0, 0))
    assert view.windowTitle().endswith("[SIMULATED]") and view.status.text() == "SIMULATED"
    assert view.details.text().endswith("parent N/A")  # its PID is no program of this machine
    view.close()


def test_view_opens_with_the_history_and_the_panel_stacks_the_process(
        qtbot, make_window, fake_nvml: FakeNvml) -> None:
    """Through the fake driver and a real child process: the History keeps its memory from
    the first tick, the process view opened later starts with those points, and the GPU
    panel's memory by process names it in its own band."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "job.py"])
    try:
        fake_nvml.add_process(0, child.pid, 3 << 30)
        w = make_window(NvmlSource)
        qtbot.waitUntil(lambda: len(w.history.process_series(
            0, child.pid, "gpu_mem_bytes")[0]) >= 5, timeout=5000)
        t, mem = w.history.process_series(0, child.pid, "gpu_mem_bytes")
        first = float(t[~np.isnan(mem)][0])
        w.menus.actions["actionMemoryByProcess"].trigger()
        stack = w.menus.memory_stacks.stacks[0]
        name = psutil.Process(child.pid).name()
        assert any(label.text == f"{name} ({child.pid})" for _, label in stack.legend.items)
        table = w.process_table
        row = next(r for r in range(table.proxy.rowCount())
                   if table.proxy.index(r, 1).data() == str(child.pid))
        opened = w.history.latest_time()
        view = w.open_process_view(table.proxy.index(row, 0))
        assert opened is not None and view.trace.gpu_mem[0][0][0] == first < opened
        assert len(view.trace.gpu_mem[0]) >= 5  # before any tick after it opened
        child.kill()
        child.wait(timeout=5)
        fake_nvml.clear_processes()  # gone between two reads: the ticks go on
        qtbot.waitUntil(lambda: view.status.text().startswith("Exited at "), timeout=5000)
        count = w.snapshot_count
        qtbot.waitUntil(lambda: w.snapshot_count >= count + 3, timeout=5000)
        assert any(label.text == f"{name} ({child.pid})" for _, label in stack.legend.items)
        assert w.history.processes(0)  # its memory stays in the window of time
        view.close()
    finally:
        child.kill()
        child.wait(timeout=5)
