"""A process's own view opens with what the History kept of the process (from before the
view opened), follows the toolbar's time window at once, and marks the process exited."""

from __future__ import annotations

import dataclasses

from qt_fixtures import hidden_or_minimised
from testkit import STATUS_OK, TEST_MACHINE

from gpumon.telemetry.history.store import History
from gpumon.telemetry.model.types import (
    GpuProcess,
    GpuSample,
    ProcessType,
    Snapshot,
)
from gpumon.ui.monitor.process.view import ProcessView
from gpumon.units import GIB


def test_a_process_view_opens_with_the_history_from_before_it_opened(qtbot) -> None:
    history = History(capacity=600)
    job = GpuProcess(0, 77, ProcessType.COMPUTE, 2 * GIB, name="job", cpu_pct=50.0,
                     host_rss_bytes=GIB, sm_util_pct=40.0, started_s=10.0)
    def sample(t: float) -> GpuSample:
        return GpuSample(0, t, mem_used_bytes=3 * GIB)

    for i in range(100):
        t = 1000.0 + i
        history.append(Snapshot(t, TEST_MACHINE, STATUS_OK, samples=(sample(t),),
                                processes=(job,) if i >= 20 else ()))
    view = ProcessView(job, 60, history=history)
    qtbot.addWidget(view)
    assert view.trace.gpu_mem[0][0] == (1020.0, float(2 * GIB))  # its first point, 80 s ago
    assert len(view.trace.cpu_pct) == 80 and view.trace.rss_bytes[-1] == (1099.0, float(GIB))
    curve = view.plots["gpu_mem"].getPlotItem().listDataItems()[0]
    x, y = curve.getData()
    assert x[0] == -79.0 and y[-1] == 2.0  # drawn at once, in GiB, before any new tick
    assert view.plots["cpu"].getPlotItem().getViewBox().viewRange()[0] == [-60, 0]
    view.set_window(300)  # the toolbar's window, followed at once
    assert view.plots["cpu"].getPlotItem().getViewBox().viewRange()[0] == [-300, 0]
    view.add(Snapshot(1099.0, TEST_MACHINE, STATUS_OK, samples=(sample(1099.0),), processes=(job,)))
    assert len(view.trace.gpu_mem[0]) == 80  # a snapshot the History had: not twice
    view.add(Snapshot(1100.0, TEST_MACHINE, STATUS_OK, samples=(sample(1100.0),)))
    assert view.status.text().startswith("Exited at ")
    view.add(Snapshot(1101.0, TEST_MACHINE, STATUS_OK, samples=(sample(1101.0),), processes=(job,)))
    assert view.status.text().startswith("Exited at ") and len(view.trace.gpu_mem[0]) == 80


def test_a_minimised_process_view_draws_when_restored(qtbot) -> None:
    history = History(capacity=600)
    job = GpuProcess(0, 77, ProcessType.COMPUTE, 2 * GIB, name="job", cpu_pct=50.0,
                     host_rss_bytes=GIB, sm_util_pct=40.0, started_s=10.0)
    for i in range(10):
        t = 1000.0 + i
        history.append(Snapshot(t, TEST_MACHINE, STATUS_OK,
                                samples=(GpuSample(0, t, mem_used_bytes=3 * GIB),),
                                processes=(job,)))
    view = ProcessView(job, 60, history=history)
    qtbot.addWidget(view)
    with qtbot.waitExposed(view):
        view.show()
    curve = view.plots["gpu_mem"].getPlotItem().listDataItems()[0]
    assert curve.getData()[0][0] == -9.0
    view.showMinimized()
    qtbot.waitUntil(lambda: hidden_or_minimised(view), timeout=3000)
    grown = dataclasses.replace(job, gpu_mem_bytes=3 * GIB)
    for i in range(10, 15):
        view.add(Snapshot(1000.0 + i, TEST_MACHINE, STATUS_OK, processes=(grown,)))
    assert len(view.trace.gpu_mem[0]) == 15  # the trace grew ...
    assert curve.getData()[0][0] == -9.0 and curve.getData()[1][-1] == 2.0  # ... not drawn
    view.showNormal()
    qtbot.waitUntil(lambda: curve.getData()[0][0] == -14.0, timeout=3000)
    assert curve.getData()[1][-1] == 3.0  # the newest reading, drawn on restore
